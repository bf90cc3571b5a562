import { randomBytes } from 'node:crypto';
import type { Row } from '../../db/index.ts';
import type { Memory, MemoryCategory, MemorySourceType } from './types.ts';

/** The columns every read of a memory selects, for a table aliased `m`. */
export const MEMORY_COLUMNS = `m.id, m.user_id, m.content, m.tags, m.category, m.importance, m.source_type,
  m.source_conversation_id, m.embedding_model, m.embedded_at, m.accessed_at, m.archived_at, m.created_at,
  m.updated_at`;

export function toMemory(row: Row): Memory {
  return {
    id: String(row.id),
    userId: String(row.user_id),
    content: String(row.content),
    tags: (row.tags as string[] | null) ?? [],
    category: row.category as MemoryCategory,
    // `real` holds 0.7 as 0.699999988…; three decimals is all importance means.
    importance: Math.round(Number(row.importance) * 1000) / 1000,
    sourceType: row.source_type as MemorySourceType,
    sourceConversationId: (row.source_conversation_id as string | null) ?? null,
    embeddingModel: (row.embedding_model as string | null) ?? null,
    embeddedAt: toIso(row.embedded_at),
    accessedAt: toIso(row.accessed_at) ?? '',
    archivedAt: toIso(row.archived_at),
    createdAt: toIso(row.created_at) ?? '',
    updatedAt: toIso(row.updated_at) ?? '',
  };
}

export function toIso(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  return new Date(String(value)).toISOString();
}

const BASE32 = '0123456789abcdefghjkmnpqrstvwxyz';

/** `<prefix>_` + 8 characters of Crockford base32 (40 random bits), like task ids. */
export function randomId(prefix: string): string {
  const bytes = randomBytes(8);
  let id = `${prefix}_`;
  for (let index = 0; index < 8; index++) id += BASE32[(bytes[index] ?? 0) & 31];
  return id;
}

/** A vector as pgvector's text input, `[0.1,0.2]`. */
export function vectorLiteral(vector: readonly number[]): string {
  return `[${vector.join(',')}]`;
}
