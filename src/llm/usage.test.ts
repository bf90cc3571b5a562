import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/support/db.ts';
import type { ModelSpec } from '../config/index.ts';
import type { LlmCallRecord } from './types.ts';
import { addUsage, costOf, createDbUsageRecorder, emptyUsage } from './usage.ts';

const sonnet: ModelSpec = {
  id: 'anthropic/claude-sonnet-4.5',
  tier: 'primary',
  context_window: 200_000,
  pricing: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 },
  tools: true,
};

describe('costOf', () => {
  it('bills uncached input, cache reads, cache writes and output at their own prices', () => {
    const cost = costOf(sonnet, {
      promptTokens: 1_000_000,
      cachedTokens: 500_000,
      cacheWriteTokens: 200_000,
      completionTokens: 100_000,
    });
    expect(cost).toBeCloseTo(300_000 * 3e-6 + 500_000 * 0.3e-6 + 200_000 * 3.75e-6 + 100_000 * 15e-6, 12);
  });

  it('never bills negative uncached input when a provider over-reports cache tokens', () => {
    const cost = costOf(sonnet, {
      promptTokens: 100,
      cachedTokens: 150,
      cacheWriteTokens: 0,
      completionTokens: 0,
    });
    expect(cost).toBeCloseTo(150 * 0.3e-6, 12);
  });
});

describe('addUsage', () => {
  it('adds every field', () => {
    const a = { promptTokens: 1, cachedTokens: 2, cacheWriteTokens: 3, completionTokens: 4, cost: 0.5 };
    expect(addUsage(a, a)).toEqual({
      promptTokens: 2,
      cachedTokens: 4,
      cacheWriteTokens: 6,
      completionTokens: 8,
      cost: 1,
    });
    expect(addUsage(emptyUsage(), a)).toEqual(a);
  });
});

describe('createDbUsageRecorder', () => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await createTestDatabase('pglite');
  });
  afterAll(async () => {
    await test.drop();
  });

  const record: LlmCallRecord = {
    turnId: 'turn-1',
    executionId: null,
    conversationId: 'conv-1',
    userId: 'local',
    role: 'orchestrator',
    model: 'anthropic/claude-sonnet-4.5',
    usage: {
      promptTokens: 1200,
      cachedTokens: 1000,
      cacheWriteTokens: 100,
      completionTokens: 50,
      cost: 0.0012,
    },
    latencyMs: 812.6,
  };

  it('stores each attempt in llm_calls', async () => {
    const recorder = createDbUsageRecorder(test.database);
    await recorder(record);
    await recorder({
      ...record,
      usage: emptyUsage(),
      errorClass: 'rate_limit',
      error: 'HTTP 429: slow down',
    });
    const rows = await test.database.query(
      'SELECT turn_id, execution_id, conversation_id, user_id, role, model, prompt_tokens, cached_tokens, cache_write_tokens, completion_tokens, cost, latency_ms, error_class, error FROM llm_calls ORDER BY id',
    );
    expect(rows).toEqual([
      {
        turn_id: 'turn-1',
        execution_id: null,
        conversation_id: 'conv-1',
        user_id: 'local',
        role: 'orchestrator',
        model: 'anthropic/claude-sonnet-4.5',
        prompt_tokens: 1200,
        cached_tokens: 1000,
        cache_write_tokens: 100,
        completion_tokens: 50,
        cost: 0.0012,
        latency_ms: 813,
        error_class: null,
        error: null,
      },
      expect.objectContaining({ prompt_tokens: 0, error_class: 'rate_limit', error: 'HTTP 429: slow down' }),
    ]);
  });

  it('swallows and logs a failed insert', async () => {
    const warnings: unknown[] = [];
    const logger = { warn: (...args: unknown[]) => void warnings.push(args) } as unknown as Parameters<
      typeof createDbUsageRecorder
    >[1];
    const broken = { query: async () => Promise.reject(new Error('connection lost')) };
    await expect(createDbUsageRecorder(broken, logger)(record)).resolves.toBeUndefined();
    expect(JSON.stringify(warnings)).toContain('connection lost');
  });
});
