import type { Database } from '../../db/index.ts';
import { StewardError } from '../../errors.ts';
import type { CallContext, LlmClient } from '../../llm/index.ts';
import { LlmError } from '../../llm/index.ts';
import { vectorLiteral } from './rows.ts';
import type { QueryEmbedder } from './types.ts';

/*
 * Embedding happens in a background job, never on the request path: a save returns at once
 * and its memory is found by full text until the job has embedded it.
 */

export type PendingEmbedding = { id: string; content: string; contentHash: string };

/** Live memories whose current content has no embedding yet, oldest first; none without pgvector. */
export async function pendingEmbeddings(db: Database, limit: number): Promise<PendingEmbedding[]> {
  if (!db.hasVector) return [];
  const rows = await db.query<{ id: string; content: string; content_hash: string }>(
    `SELECT id, content, content_hash FROM memory_entries
     WHERE embedded_at IS NULL AND archived_at IS NULL
     ORDER BY created_at, id
     LIMIT $1`,
    [Math.max(1, Math.trunc(limit))],
  );
  return rows.map((row) => ({ id: row.id, content: row.content, contentHash: row.content_hash }));
}

/**
 * Stores the embedding of a memory made with `model`. With `contentHash`, stores it only if
 * the memory still has that content (a merge may have changed it meanwhile). Returns whether
 * it was stored.
 */
export async function storeEmbedding(
  db: Database,
  memoryId: string,
  vector: readonly number[],
  model: string,
  options: { contentHash?: string; now?: Date } = {},
): Promise<boolean> {
  if (!db.hasVector) {
    throw new StewardError('vector_unavailable', 'This database has no vector extension.');
  }
  if (vector.length === 0 || !vector.every(Number.isFinite)) {
    throw new StewardError(
      'embedding_invalid',
      `The ${model} embedding of memory ${memoryId} is not a vector.`,
    );
  }
  // One statement, so the vector and the memory's embedded_at never disagree.
  const rows = await db.query(
    `WITH target AS (
       UPDATE memory_entries SET embedding_model = $3, embedded_at = $5
       WHERE id = $1 AND ($4::text IS NULL OR content_hash = $4)
       RETURNING id
     )
     INSERT INTO memory_embeddings (memory_id, embedding)
     SELECT id, $2::vector FROM target
     ON CONFLICT (memory_id) DO UPDATE SET embedding = EXCLUDED.embedding
     RETURNING memory_id`,
    [memoryId, vectorLiteral(vector), model, options.contentHash ?? null, options.now ?? new Date()],
  );
  return rows.length > 0;
}

export type EmbedPendingOptions = {
  /** Overrides the embeddings role's model. */
  model?: string;
  /** Memories per embeddings call (default 32). */
  batchSize?: number;
  /** Stop after this many calls (default: until nothing is pending). */
  maxBatches?: number;
  signal?: AbortSignal;
};

/**
 * The embed job: embeds pending memories batch by batch until none is left and returns how
 * many it embedded. Does nothing without pgvector. Throws LlmError when the model fails;
 * what was stored before stays stored.
 */
export async function embedPendingMemories(
  db: Database,
  llm: LlmClient,
  options: EmbedPendingOptions = {},
): Promise<number> {
  if (!db.hasVector) return 0;
  const batchSize = Math.max(1, Math.trunc(options.batchSize ?? 32));
  const maxBatches = options.maxBatches ?? Number.POSITIVE_INFINITY;
  let embedded = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    options.signal?.throwIfAborted();
    const pending = await pendingEmbeddings(db, batchSize);
    if (pending.length === 0) break;
    const response = await llm.embed({
      texts: pending.map((memory) => memory.content),
      model: options.model,
      signal: options.signal,
    });
    if (response.vectors.length !== pending.length) {
      throw new StewardError(
        'embedding_invalid',
        `${response.model} returned ${response.vectors.length} embeddings for ${pending.length} texts.`,
      );
    }
    let stored = 0;
    for (const [index, memory] of pending.entries()) {
      const vector = response.vectors[index]!;
      if (await storeEmbedding(db, memory.id, vector, response.model, { contentHash: memory.contentHash })) {
        stored++;
      }
    }
    embedded += stored;
    // Nothing stored means every memory changed under us; the next run picks them up again.
    if (pending.length < batchSize || stored === 0) break;
  }
  return embedded;
}

/**
 * A QueryEmbedder over an LlmClient's embeddings role. Returns null when no embeddings model
 * is configured; other model failures throw (search then falls back to full text).
 */
export function llmEmbedder(
  llm: LlmClient,
  options: { model?: string; context?: CallContext } = {},
): QueryEmbedder {
  return async (text, signal) => {
    try {
      const response = await llm.embed({
        texts: [text],
        model: options.model,
        context: options.context,
        signal,
      });
      const vector = response.vectors[0];
      return vector ? { vector, model: response.model } : null;
    } catch (error) {
      if (error instanceof LlmError && error.errorClass === 'not_configured') return null;
      throw error;
    }
  };
}
