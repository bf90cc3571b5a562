export const MEMORY_CATEGORIES = [
  'preference',
  'fact',
  'decision',
  'goal',
  'relationship',
  'context',
  'instruction',
] as const;
export const MEMORY_SOURCE_TYPES = ['user', 'compaction', 'agent', 'import'] as const;
export const ENTITY_KINDS = ['person', 'organization', 'project', 'place', 'topic', 'other'] as const;

export type MemoryCategory = (typeof MEMORY_CATEGORIES)[number];
export type MemorySourceType = (typeof MEMORY_SOURCE_TYPES)[number];
export type EntityKind = (typeof ENTITY_KINDS)[number];

/** One long-term memory of one user. Timestamps are ISO strings. */
export type Memory = {
  id: string;
  userId: string;
  content: string;
  tags: string[];
  category: MemoryCategory;
  /** 0..1; decays while the memory goes unused. */
  importance: number;
  sourceType: MemorySourceType;
  sourceConversationId: string | null;
  /** The model of the current embedding; null when never embedded. */
  embeddingModel: string | null;
  /** Null while the current content waits for the embed job. */
  embeddedAt: string | null;
  accessedAt: string;
  archivedAt: string | null;
  createdAt: string;
  updatedAt: string;
};

/**
 * Embeds a search query. Returns null when no embeddings model is configured. May throw when
 * the model is down; search then runs on full text alone. `configured`, when present, says
 * without a call whether an embeddings model is configured, so a search can tell "no embedding
 * model is configured" from "no memories are embedded yet" before spending a call.
 */
export type QueryEmbedder = ((
  text: string,
  signal?: AbortSignal,
) => Promise<{ vector: number[]; model: string } | null>) & { configured?: () => boolean };

export type Entity = { id: string; name: string; kind: EntityKind };
