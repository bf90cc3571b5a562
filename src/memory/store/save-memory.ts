import type { Database } from '../../db/index.ts';
import { StewardError } from '../../errors.ts';
import { MEMORY_COLUMNS, randomId, toMemory } from './rows.ts';
import { cleanContent, contentHash, contentWords, normalizeTags, wordJaccard } from './text.ts';
import type { Memory, MemoryCategory, MemorySourceType } from './types.ts';

export type NewMemory = {
  /** One self-contained statement ("Prefers oat milk in coffee"). */
  content: string;
  category: MemoryCategory;
  tags?: readonly string[];
  /** 0..1, default 0.5; clamped. */
  importance?: number;
  /** Default `user`. */
  sourceType?: MemorySourceType;
  conversationId?: string | null;
};

export type SaveMemoryResult = {
  memory: Memory;
  /** True when an existing near-duplicate was updated instead of a new memory added. */
  merged: boolean;
};

export type SaveMemoryOptions = { now?: Date; randomId?: () => string };

/** Word-set Jaccard similarity at or above which two memories of one category are the same memory. */
export const DUPLICATE_SIMILARITY = 0.8;
/** Candidates for de-duplication, fetched by full-text overlap with the new content. */
const DUPLICATE_CANDIDATES = 20;

/**
 * Saves a memory for `userId`, or merges it into a near-duplicate of the same user and
 * category: identical after normalization, or sharing at least 80 % of their words (Jaccard
 * over lowercased words without stop words). A merge keeps the longer content (the new one
 * on a tie, as it is newer), unions the tags, keeps the higher importance and marks the
 * memory for re-embedding when its content changed. Archived memories are never merged into.
 * Throws StewardError `memory_invalid` for empty content: callers validate first.
 */
export async function saveMemory(
  db: Database,
  userId: string,
  input: NewMemory,
  options: SaveMemoryOptions = {},
): Promise<SaveMemoryResult> {
  const content = cleanContent(input.content);
  if (!content) throw new StewardError('memory_invalid', 'A memory needs some content.');
  const importance = clampImportance(input.importance ?? 0.5);
  const tags = normalizeTags(input.tags ?? []);
  const hash = contentHash(content);
  const now = options.now ?? new Date();
  const conversationId = input.conversationId ?? null;

  return db.transaction(async (tx) => {
    // Two saves of the same memory at once would both miss each other and insert twice.
    await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`memory:save:${userId}`]);

    const params: unknown[] = [userId, input.category, hash];
    // Any shared word makes a candidate; Jaccard below decides.
    const words = [...new Set(contentWords(content))].join(' | ');
    let match = 'm.content_hash = $3';
    let rank = '0';
    if (words) {
      params.push(words);
      match = `(m.content_hash = $3 OR m.search_vector @@ to_tsquery('english', $4))`;
      rank = `ts_rank_cd(m.search_vector, to_tsquery('english', $4))`;
    }
    const candidates = (
      await tx.query(
        `SELECT ${MEMORY_COLUMNS}, m.content_hash FROM memory_entries m
         WHERE m.user_id = $1 AND m.category = $2 AND m.archived_at IS NULL AND ${match}
         ORDER BY (m.content_hash = $3) DESC, ${rank} DESC, m.updated_at DESC
         LIMIT ${DUPLICATE_CANDIDATES}
         FOR UPDATE`,
        params,
      )
    ).map((row) => ({ memory: toMemory(row), hash: String(row.content_hash) }));

    let duplicate: Memory | null = null;
    let best = DUPLICATE_SIMILARITY;
    for (const candidate of candidates) {
      const similarity = candidate.hash === hash ? 1 : wordJaccard(candidate.memory.content, content);
      if (similarity >= best && (duplicate === null || similarity > best)) {
        duplicate = candidate.memory;
        best = similarity;
      }
    }

    if (duplicate) {
      const keepNew = content.length >= duplicate.content.length;
      const rows = await tx.query(
        `UPDATE memory_entries m SET
           content = $3,
           content_hash = $4,
           embedded_at = CASE WHEN m.content_hash = $4 THEN m.embedded_at END,
           tags = $5::text[],
           importance = GREATEST(m.importance, $6::real),
           source_conversation_id = COALESCE(m.source_conversation_id, $7),
           accessed_at = $8,
           updated_at = $8
         WHERE m.id = $1 AND m.user_id = $2
         RETURNING ${MEMORY_COLUMNS}`,
        [
          duplicate.id,
          userId,
          keepNew ? content : duplicate.content,
          keepNew ? hash : contentHash(duplicate.content),
          normalizeTags([...duplicate.tags, ...tags]),
          importance,
          conversationId,
          now,
        ],
      );
      return { memory: toMemory(rows[0]!), merged: true };
    }

    const nextId = options.randomId ?? (() => randomId('m'));
    // Ids are random; on the rare collision draw another rather than fail.
    for (let attempt = 0; attempt < 8; attempt++) {
      const rows = await tx.query(
        `INSERT INTO memory_entries AS m (id, user_id, content, tags, category, importance, source_type,
           source_conversation_id, content_hash, accessed_at, created_at, updated_at)
         VALUES ($1, $2, $3, $4::text[], $5, $6::real, $7, $8, $9, $10, $10, $10)
         ON CONFLICT (id) DO NOTHING
         RETURNING ${MEMORY_COLUMNS}`,
        [
          nextId(),
          userId,
          content,
          tags,
          input.category,
          importance,
          input.sourceType ?? 'user',
          conversationId,
          hash,
          now,
        ],
      );
      if (rows[0]) return { memory: toMemory(rows[0]), merged: false };
    }
    throw new StewardError('memory_id_exhausted', 'Could not draw an unused memory id.');
  });
}

function clampImportance(value: number): number {
  if (!Number.isFinite(value)) return 0.5;
  return Math.min(1, Math.max(0, value));
}
