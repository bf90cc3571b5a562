import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config/index.ts';
import { openPglite } from '../db/index.ts';
import { silentLogger } from '../logging/index.ts';
import { createServerApp } from '../server/index.ts';
import { StewardMetrics } from './steward-metrics.ts';

/** The value of one sample line `name{labels} value`, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name) || line.startsWith('#')) continue;
    const match = /^([a-z_:]+)(\{(.*)\})? (.+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries(
      [...(match[3] ?? '').matchAll(/([a-z_]+)="([^"]*)"/g)].map((pair) => [pair[1], pair[2]]),
    );
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) return Number(match[4]);
  }
  return undefined;
}

const turn = { turnId: 't1', conversationId: 'c1', userId: 'local', channel: 'api' };

describe('StewardMetrics', () => {
  it('exposes every steward_ metric at zero from the start, beside the default process metrics', async () => {
    const metrics = new StewardMetrics();
    metrics.seed({ llmModels: [{ role: 'orchestrator', model: 'test/o' }], skills: ['tasks.create'] });
    const { body, contentType } = await metrics.render();
    expect(contentType).toContain('text/plain');
    expect(sample(body, 'steward_turns_total', { mode: 'multi_agent', status: 'completed' })).toBe(0);
    expect(
      sample(body, 'steward_llm_calls_total', { role: 'orchestrator', model: 'test/o', status: 'ok' }),
    ).toBe(0);
    for (const kind of ['prompt', 'cached', 'completion']) {
      expect(sample(body, 'steward_llm_tokens_total', { kind })).toBe(0);
    }
    expect(sample(body, 'steward_skill_calls_total', { skill: 'tasks.create', status: 'ok' })).toBe(0);
    expect(sample(body, 'steward_webhooks_total', { channel: 'telegram', result: 'rejected' })).toBe(0);
    expect(sample(body, 'steward_outbox_backlog')).toBe(0);
    expect(body).toContain('process_cpu_user_seconds_total');
    expect(body).toContain('nodejs_eventloop_lag_seconds');
  });

  it('counts a turn, its LLM calls and tokens, and its skill calls', async () => {
    const metrics = new StewardMetrics({ isKnownSkill: (name) => name === 'tasks.create' });
    metrics.turnEvent(
      { type: 'turn_start', turnId: 't1', conversationId: 'c1', mode: 'multi_agent', resumed: false },
      turn,
    );
    metrics.llmCall({
      role: 'orchestrator',
      model: 'test/o',
      usage: { promptTokens: 120, cachedTokens: 100, cacheWriteTokens: 0, completionTokens: 7, cost: 0.001 },
      latencyMs: 30,
    });
    metrics.llmCall({
      role: 'orchestrator',
      model: 'test/o',
      usage: { promptTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, completionTokens: 0, cost: 0 },
      latencyMs: 5,
      errorClass: 'provider_down',
    });
    for (const skill of ['tasks.create', 'made.up']) {
      metrics.turnEvent(
        {
          type: 'skill_call_end',
          agentId: 'a',
          command: `${skill} --x`,
          skill,
          status: 'ok',
          durationMs: 12,
          executionId: 'e',
        },
        turn,
      );
    }
    metrics.turnEvent(
      {
        type: 'turn_end',
        turnId: 't1',
        status: 'completed',
        reply: 'done',
        receipts: [],
        usage: {
          promptTokens: 120,
          cachedTokens: 100,
          cacheWriteTokens: 0,
          completionTokens: 7,
          cost: 0.001,
        },
      },
      turn,
    );
    metrics.webhookReceived('slack', 'rejected');
    const { body } = await metrics.render();
    expect(sample(body, 'steward_turns_total', { mode: 'multi_agent', status: 'completed' })).toBe(1);
    expect(
      sample(body, 'steward_turn_duration_seconds_count', { mode: 'multi_agent', status: 'completed' }),
    ).toBe(1);
    expect(sample(body, 'steward_llm_calls_total', { role: 'orchestrator', status: 'ok' })).toBe(1);
    expect(sample(body, 'steward_llm_calls_total', { role: 'orchestrator', status: 'error' })).toBe(1);
    expect(sample(body, 'steward_llm_tokens_total', { kind: 'prompt' })).toBe(120);
    expect(sample(body, 'steward_llm_tokens_total', { kind: 'cached' })).toBe(100);
    expect(sample(body, 'steward_llm_tokens_total', { kind: 'completion' })).toBe(7);
    expect(sample(body, 'steward_skill_calls_total', { skill: 'tasks.create', status: 'ok' })).toBe(1);
    expect(sample(body, 'steward_skill_calls_total', { skill: 'unknown', status: 'ok' })).toBe(1);
    expect(sample(body, 'steward_webhooks_total', { channel: 'slack', result: 'rejected' })).toBe(1);
  });

  it('reads queue depths and breaker states at scrape time', async () => {
    const metrics = new StewardMetrics({
      queueDepths: async () => [{ queue: 'memory.compaction', ready: 2, active: 1, deferred: 3 }],
      breakerStates: async () => [{ skill: 'email.send', state: 'open' }],
    });
    const { body } = await metrics.render();
    expect(sample(body, 'steward_queue_depth', { queue: 'memory.compaction', state: 'deferred' })).toBe(3);
    expect(sample(body, 'steward_circuit_breaker_state', { skill: 'email.send' })).toBe(2);
  });
});

describe('GET /metrics', () => {
  it('requires the API token or the metrics token when one is set', async () => {
    const database = await openPglite(null);
    try {
      const metrics = new StewardMetrics();
      const serve = (env: Record<string, string>) => {
        const config = loadConfig({ env, cwd: process.cwd() });
        return createServerApp({ database, logger: silentLogger(), config: () => config, metrics });
      };
      const open = await serve({}).request('/metrics');
      expect(open.status).toBe(200);
      expect(await open.text()).toContain('steward_turns_total');

      const guarded = serve({
        STEWARD_API_TOKEN: 'api-token-0123456789',
        STEWARD_METRICS_TOKEN: 'metrics-token-0123456789',
      });
      expect((await guarded.request('/metrics')).status).toBe(401);
      const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
      expect((await guarded.request('/metrics', bearer('wrong-token-0123456789'))).status).toBe(401);
      expect((await guarded.request('/metrics', bearer('api-token-0123456789'))).status).toBe(200);
      expect((await guarded.request('/metrics', bearer('metrics-token-0123456789'))).status).toBe(200);

      const metricsOnly = serve({ STEWARD_METRICS_TOKEN: 'metrics-token-0123456789' });
      expect((await metricsOnly.request('/metrics')).status).toBe(401);
      expect((await metricsOnly.request('/metrics', bearer('metrics-token-0123456789'))).status).toBe(200);
    } finally {
      await database.close();
    }
  });
});
