import type { ModelSpec } from '../config/index.ts';
import type { Queryable } from '../db/index.ts';
import { errorMessage } from '../errors.ts';
import { type Logger, silentLogger } from '../logging/index.ts';
import type { LlmCallRecord, Usage, UsageRecorder } from './types.ts';

export type TokenCounts = Pick<
  Usage,
  'promptTokens' | 'cachedTokens' | 'cacheWriteTokens' | 'completionTokens'
>;

const PER_MILLION = 1_000_000;

/**
 * US dollars a call cost at the model's roster prices. `promptTokens` includes cached and
 * cache-write tokens (OpenAI / OpenRouter convention); each part is billed at its own rate.
 */
export function costOf(model: ModelSpec, tokens: TokenCounts): number {
  const { input, output, cache_read: cacheRead, cache_write: cacheWrite } = model.pricing;
  const uncached = Math.max(0, tokens.promptTokens - tokens.cachedTokens - tokens.cacheWriteTokens);
  return (
    (uncached * input +
      tokens.cachedTokens * cacheRead +
      tokens.cacheWriteTokens * cacheWrite +
      tokens.completionTokens * output) /
    PER_MILLION
  );
}

export function emptyUsage(): Usage {
  return { promptTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, completionTokens: 0, cost: 0 };
}

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    cachedTokens: a.cachedTokens + b.cachedTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    cost: a.cost + b.cost,
  };
}

const INSERT_CALL = `INSERT INTO llm_calls
  (turn_id, execution_id, conversation_id, user_id, role, model, prompt_tokens, cached_tokens,
   cache_write_tokens, completion_tokens, cost, latency_ms, error_class, error)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`;

/** Error texts are for people reading the dashboard; keep rows small. */
const MAX_ERROR_LENGTH = 2_000;

/**
 * A recorder that stores every attempt in `llm_calls`. It never throws or rejects: a failed
 * insert is logged and dropped, so accounting can never fail an LLM call.
 */
export function createDbUsageRecorder(database: Queryable, logger: Logger = silentLogger()): UsageRecorder {
  return async (record: LlmCallRecord) => {
    try {
      await database.query(INSERT_CALL, [
        record.turnId ?? null,
        record.executionId ?? null,
        record.conversationId ?? null,
        record.userId ?? null,
        record.role,
        record.model,
        record.usage.promptTokens,
        record.usage.cachedTokens,
        record.usage.cacheWriteTokens,
        record.usage.completionTokens,
        record.usage.cost,
        Math.round(record.latencyMs),
        record.errorClass ?? null,
        record.error ? record.error.slice(0, MAX_ERROR_LENGTH) : null,
      ]);
    } catch (error) {
      logger.warn(
        { err: errorMessage(error), model: record.model, role: record.role },
        'could not record LLM call',
      );
    }
  };
}
