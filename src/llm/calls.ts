import type { Queryable } from '../db/index.ts';

/* Reads of `llm_calls` (owned by this folder; rows are written by the usage recorder). */

export type LlmCallRow = {
  role: string;
  model: string;
  executionId: string | null;
  promptTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
  completionTokens: number;
  cost: number;
  latencyMs: number;
  errorClass: string | null;
  error: string | null;
  createdAt: Date;
};

/** Every LLM call (attempt) of a turn, in order. */
export async function llmCallsOfTurn(db: Queryable, turnId: string): Promise<LlmCallRow[]> {
  const rows = await db.query<{
    role: string;
    model: string;
    execution_id: string | null;
    prompt_tokens: number;
    cached_tokens: number;
    cache_write_tokens: number;
    completion_tokens: number;
    cost: number;
    latency_ms: number;
    error_class: string | null;
    error: string | null;
    created_at: Date;
  }>(
    `SELECT role, model, execution_id, prompt_tokens, cached_tokens, cache_write_tokens, completion_tokens, cost,
            latency_ms, error_class, error, created_at
     FROM llm_calls WHERE turn_id = $1 ORDER BY id`,
    [turnId],
  );
  return rows.map((row) => ({
    role: row.role,
    model: row.model,
    executionId: row.execution_id,
    promptTokens: row.prompt_tokens,
    cachedTokens: row.cached_tokens,
    cacheWriteTokens: row.cache_write_tokens,
    completionTokens: row.completion_tokens,
    cost: row.cost,
    latencyMs: row.latency_ms,
    errorClass: row.error_class,
    error: row.error,
    createdAt: new Date(row.created_at),
  }));
}

/**
 * A statement's CTE body: the total usage of a turn's LLM calls as one row, its columns named as
 * `Usage`'s fields (`$n`: the turn id). agents/ stores it with the turn's end in one statement, so
 * the usage recorded is what `llm_calls` holds then — calls from before a crash included.
 */
export function turnUsageSql(turnId: number): string {
  return `SELECT COALESCE(sum(prompt_tokens), 0)::int AS "promptTokens", COALESCE(sum(cached_tokens), 0)::int AS "cachedTokens",
            COALESCE(sum(cache_write_tokens), 0)::int AS "cacheWriteTokens",
            COALESCE(sum(completion_tokens), 0)::int AS "completionTokens", COALESCE(sum(cost), 0)::float8 AS cost
     FROM llm_calls WHERE turn_id = $${turnId}`;
}
