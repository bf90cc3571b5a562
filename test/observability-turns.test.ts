import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPACTION_JOB } from '../src/memory/index.ts';
import { approve, dispatch, getResults, reply, run, scriptModels } from './support/agent-scripts.ts';
import { backends } from './support/db.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import {
  type CollectedSpan,
  type FakeOtlpCollector,
  startFakeOtlpCollector,
} from './support/fake-otlp-collector.ts';
import { type FakeWebhook, startFakeWebhook } from './support/fake-webhook.ts';
import { startTestSteward, type TestSteward } from './support/steward.ts';

/*
 * What one turn leaves behind for operators: its trace at an OTLP collector (JSON), its
 * counters at /metrics, and, when the model is down, one alert at the webhook and a reply that
 * says what is wrong.
 */

/** The value of one sample line `name{labels} value` of a Prometheus text exposition. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-z_:]+)\{(.*)\} (.+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries(
      [...match[2]!.matchAll(/([a-z_]+)="([^"]*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) return Number(match[3]);
  }
  return undefined;
}

const backend = backends()[0]!;
let fake: FakeLlm;
let collector: FakeOtlpCollector;
let webhook: FakeWebhook;
let steward: TestSteward;

beforeAll(async () => {
  [fake, collector, webhook] = await Promise.all([
    startFakeLlm(),
    startFakeOtlpCollector(),
    startFakeWebhook(),
  ]);
  steward = await startTestSteward(backend, fake, {
    memory: true,
    extraYaml: [
      `tracing: { otlp_endpoint: "${collector.url}", otlp_protocol: "http/json" }`,
      `alerts: { webhook_url: "${webhook.url}/v1/spaces/AAA/messages?key=k-1&token=t%3D2" }`,
      'memory: { compaction_delay_seconds: 0 }',
      '',
    ].join('\n'),
  });
});
afterAll(async () => {
  await steward?.close();
  await Promise.all([fake?.close(), collector?.close(), webhook?.close()]);
});

describe('a turn, observed', () => {
  let turnId: string;

  it('is one trace: LLM, agent, skill and sentinel spans under the turn span, with GenAI attributes', async () => {
    const models = scriptModels(fake, {
      orchestrator: [
        dispatch({ agent_id: 'maker', mission: 'Create the task "Water plants"', skills: ['tasks.create'] }),
        getResults(),
        reply('Added it.', { usage: { promptTokens: 900, completionTokens: 12, cachedTokens: 0 } }),
      ],
      agents: { maker: [run('tasks.create --title "Water plants"'), reply('Created.')] },
      sentinel: [approve()],
      compaction: [reply('{"summary":"The user added a task.","topic_changed":false}')],
    });
    const outcome = await steward.runtime.engine.handle({
      userId: 'local',
      text: 'Add "Water plants"',
      channel: 'cli',
    });
    expect(outcome.status).toBe('completed');
    turnId = outcome.turnId;
    await steward.runtime.jobs.drain([COMPACTION_JOB]);
    models.assertDone();
    await steward.runtime.observability.flush();

    const spans = await collector.waitFor((all) => all.some((span) => span.name === 'compaction'));
    const turn = spans.find((span) => span.name === 'turn')!;
    expect(turn.parentSpanId).toBe('');
    expect(turn.attributes['steward.turn.id']).toBe(turnId);
    expect(turn.resource['service.name']).toBe('steward');
    const inTurn = spans.filter((span) => span.traceId === turn.traceId);
    const byName = (prefix: string) => inTurn.filter((span) => span.name.startsWith(prefix));
    const childOf = (span: CollectedSpan | undefined) => (child: CollectedSpan) =>
      child.parentSpanId === span?.spanId;

    const orchestratorCalls = byName('chat test/orchestrator');
    expect(orchestratorCalls).toHaveLength(3);
    expect(orchestratorCalls.every(childOf(turn))).toBe(true);
    const last = orchestratorCalls.find((span) => span.attributes['gen_ai.usage.input_tokens'] === 900)!;
    expect(last.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'test/orchestrator',
      'gen_ai.usage.input_tokens': 900,
      'gen_ai.usage.output_tokens': 12,
    });

    const agent = byName('invoke_agent maker')[0];
    expect(agent && childOf(turn)(agent)).toBe(true);
    expect(agent?.attributes['gen_ai.operation.name']).toBe('invoke_agent');
    const agentCalls = byName('chat test/agent');
    expect(agentCalls).toHaveLength(2);
    expect(agentCalls.every(childOf(agent))).toBe(true);
    const skill = byName('execute_tool tasks.create')[0];
    expect(skill && childOf(agent)(skill)).toBe(true);
    expect(skill?.attributes['gen_ai.tool.name']).toBe('tasks.create');
    const sentinel = byName('sentinel tasks.create')[0];
    expect(sentinel && childOf(agent)(sentinel)).toBe(true);
    expect(sentinel?.attributes['steward.sentinel.approved']).toBe(true);
    for (const span of inTurn) {
      expect(span.startTimeUnixNano).toBeGreaterThanOrEqual(turn.startTimeUnixNano);
      expect(span.endTimeUnixNano).toBeLessThanOrEqual(turn.endTimeUnixNano);
    }

    // Compaction is its own trace, linked to the turn it folded.
    const compaction = spans.find((span) => span.name === 'compaction')!;
    expect(compaction.traceId).not.toBe(turn.traceId);
    expect(compaction.links).toEqual([{ traceId: turn.traceId, spanId: turn.spanId }]);
    const compactionCall = spans.find((span) => span.parentSpanId === compaction.spanId);
    expect(compactionCall?.attributes['gen_ai.request.model']).toBe('test/compaction');
    // Nothing a user wrote is exported.
    expect(collector.requests.map((request) => request.body.toString('utf8')).join('')).not.toContain(
      'Water plants',
    );
  });

  it('shows in /metrics: turns, LLM calls and tokens by kind, skill calls', async () => {
    const { body } = await steward.runtime.observability.metrics!.render();
    expect(sample(body, 'steward_turns_total', { mode: 'multi_agent', status: 'completed' })).toBe(1);
    expect(
      sample(body, 'steward_llm_calls_total', {
        role: 'orchestrator',
        model: 'test/orchestrator',
        status: 'ok',
      }),
    ).toBe(3);
    expect(
      sample(body, 'steward_llm_calls_total', { role: 'sub_agent', model: 'test/agent', status: 'ok' }),
    ).toBe(2);
    const stored = await steward.db.database.query<{ prompt: number; cached: number; completion: number }>(
      `SELECT sum(prompt_tokens)::int AS prompt, sum(cached_tokens)::int AS cached, sum(completion_tokens)::int AS completion
       FROM llm_calls WHERE turn_id = $1 AND role = 'orchestrator'`,
      [turnId],
    );
    const tokens = (kind: string) =>
      sample(body, 'steward_llm_tokens_total', { role: 'orchestrator', model: 'test/orchestrator', kind });
    expect(tokens('prompt')).toBe(stored[0]!.prompt);
    expect(tokens('cached')).toBe(stored[0]!.cached);
    expect(tokens('completion')).toBe(stored[0]!.completion);
    expect(stored[0]!.prompt).toBeGreaterThan(900);
    expect(sample(body, 'steward_skill_calls_total', { skill: 'tasks.create', status: 'ok' })).toBe(1);
    expect(sample(body, 'steward_webhooks_total', { channel: 'telegram', result: 'verified' })).toBe(0);
  });
});

describe('the model is down', () => {
  it('POST /api/chat answers 200, status failed, saying what is wrong; ten failures raise one alert', async () => {
    const { app } = await steward.runtime.http();
    webhook.reset();
    // Three attempts per turn (max_retries: 2): three failed turns, then one more failure and a recovery.
    for (let index = 0; index < 10; index++) fake.enqueue({ status: 503 });
    fake.enqueue(reply('Back again.'));
    const chat = async () => {
      const response = await app.request('/api/chat', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'Are you there?', user: 'down-user' }),
      });
      expect(response.status).toBe(200);
      return (await response.json()) as { status: string; reply: string };
    };
    const failed = await chat();
    expect(failed.status).toBe('failed');
    expect(failed.reply).toMatch(/could not finish that: .*(503|unavailable)/i);
    await chat();
    await chat();
    expect((await chat()).status).toBe('completed');
    fake.assertDone();
    await steward.runtime.observability.flush();

    expect(webhook.delivered).toHaveLength(1);
    expect(webhook.delivered[0]!.url).toBe('/v1/spaces/AAA/messages?key=k-1&token=t%3D2');
    const text = (webhook.delivered[0]!.body as { text: string }).text;
    expect(text).toContain(`LLM endpoint ${new URL(fake.url).host} is failing`);
    expect(text).toContain('3 consecutive failed calls');
    expect(text).not.toContain('test-key-0123456789');
    expect(text).not.toContain('Are you there');
  });
});
