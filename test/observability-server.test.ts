import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reply } from './support/agent-scripts.ts';
import { freePort, runCli, startServer } from './support/cli.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { type FakeOtlpCollector, startFakeOtlpCollector } from './support/fake-otlp-collector.ts';
import { writeTestConfig } from './support/steward.ts';

/*
 * The operator's view of a real `steward start`: /metrics behind the API token, spans at an
 * OTLP/HTTP JSON collector, `steward usage --json` through the server and after it stopped,
 * and `steward logs` showing the turn's lines with their ids.
 */

const TOKEN = 'api-token-0123456789abcdef';
const METRIC_NAMES = [
  'steward_turns_total',
  'steward_llm_calls_total',
  'steward_llm_tokens_total',
  'steward_skill_calls_total',
  'steward_webhooks_total',
];

let fake: FakeLlm;
let collector: FakeOtlpCollector;
let env: Record<string, string>;
let server: Awaited<ReturnType<typeof startServer>>;
beforeAll(async () => {
  [fake, collector] = await Promise.all([startFakeLlm(), startFakeOtlpCollector()]);
  env = {
    ...writeTestConfig(fake.url).env,
    PORT: String(await freePort()),
    STEWARD_API_TOKEN: TOKEN,
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '100',
    LOG_LEVEL: 'debug',
  };
  server = await startServer({ env });
});
afterAll(async () => {
  await server?.stop('SIGTERM');
  await Promise.all([fake?.close(), collector?.close()]);
});

const auth = { authorization: `Bearer ${TOKEN}` };
const metricsText = async () => {
  const response = await fetch(`${server.url}/metrics`, { headers: auth });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/plain');
  return response.text();
};

describe('steward start, observed', () => {
  let turnId: string;

  it('serves /metrics behind the API token, every steward_ metric present at zero', async () => {
    expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
    const text = await metricsText();
    for (const name of METRIC_NAMES) expect(text).toMatch(new RegExp(`^${name}\\{[^}]*\\} 0$`, 'm'));
    for (const kind of ['prompt', 'cached', 'completion']) {
      expect(text).toMatch(new RegExp(`^steward_llm_tokens_total\\{[^}]*kind="${kind}"[^}]*\\} 0$`, 'm'));
    }
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);
  });

  it('counts a turn, and exports its spans with the GenAI attributes', async () => {
    fake.enqueue(
      reply('Hello there.', { usage: { promptTokens: 321, completionTokens: 9, cachedTokens: 300 } }),
    );
    const response = await fetch(`${server.url}/api/chat`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Hi', user: 'operator-test' }),
    });
    const body = (await response.json()) as { status: string; turnId: string };
    expect(body.status).toBe('completed');
    turnId = body.turnId;
    fake.assertDone();

    const text = await metricsText();
    const labels = 'role="orchestrator",model="test/orchestrator"';
    expect(text).toContain(`steward_llm_calls_total{${labels},status="ok"} 1`);
    expect(text).toContain(`steward_llm_tokens_total{${labels},kind="prompt"} 321`);
    expect(text).toContain(`steward_llm_tokens_total{${labels},kind="cached"} 300`);
    expect(text).toContain(`steward_llm_tokens_total{${labels},kind="completion"} 9`);
    expect(text).toMatch(/^steward_turns_total\{mode="multi_agent",status="completed"\} 1$/m);

    const spans = await collector.waitFor((all) => all.some((span) => span.name === 'turn'));
    expect(collector.requests[0]).toMatchObject({ path: '/v1/traces' });
    expect(collector.requests[0]!.contentType).toContain('application/json');
    const turn = spans.find((span) => span.name === 'turn')!;
    expect(turn.attributes['steward.turn.id']).toBe(turnId);
    const call = spans.find((span) => span.parentSpanId === turn.spanId && span.name.startsWith('chat '));
    expect(call?.traceId).toBe(turn.traceId);
    expect(call?.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'test/orchestrator',
      'gen_ai.usage.input_tokens': 321,
      'gen_ai.usage.output_tokens': 9,
    });
  });

  it('steward usage --json answers through the running server', async () => {
    const result = await runCli(['usage', '--json'], { env });
    expect(result.code).toBe(0);
    const usage = JSON.parse(result.stdout) as { days: Array<Record<string, unknown>> };
    expect(usage.days).toEqual([
      {
        date: new Date().toISOString().slice(0, 10),
        user: 'operator-test',
        model: 'test/orchestrator',
        calls: 1,
        prompt_tokens: 321,
        cached_tokens: 300,
        completion_tokens: 9,
        cost_usd: 0,
      },
    ]);
  });

  it('steward logs shows the turn, every line of it carrying the turn id', async () => {
    const result = await runCli(['logs', '--json', '--lines', '500'], { env });
    expect(result.code).toBe(0);
    const lines = result.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const ofTurn = lines.filter((line) => line.turnId === turnId);
    expect(ofTurn.map((line) => line.msg)).toEqual(
      expect.arrayContaining(['turn_start', 'llm_call', 'turn_end']),
    );
    // From the turn's start to its end, every line the turn wrote carries its id; background
    // work interleaved there (job workers) carries none.
    const first = lines.findIndex((line) => line.msg === 'turn_start');
    const last = lines.findIndex((line) => line.msg === 'turn_end');
    const during = lines.slice(first, last + 1);
    const events = new Set(['turn_start', 'llm_call', 'turn_end']);
    expect(
      during.filter((line) => events.has(String(line.msg))).every((line) => line.turnId === turnId),
    ).toBe(true);
    expect(during.filter((line) => line.turnId !== turnId).every((line) => line.turnId === undefined)).toBe(
      true,
    );
    expect(lines.filter((line) => line.turnId === undefined && events.has(String(line.msg)))).toEqual([]);
    expect(result.stdout).not.toContain(TOKEN);
    expect(result.stdout).not.toContain('test-key-0123456789');

    const pretty = await runCli(['logs', '--lines', '5'], { env });
    expect(pretty.stdout).toMatch(/(INFO|DEBUG|WARN)/);
  });

  it('steward usage --json reads the same figures after the server stopped', async () => {
    expect(await server.stop('SIGTERM')).toBe(0);
    const result = await runCli(['usage', '--json', '--days', '1'], { env });
    expect(result.code).toBe(0);
    const usage = JSON.parse(result.stdout) as { days: Array<{ user: string; prompt_tokens: number }> };
    expect(usage.days.map((day) => [day.user, day.prompt_tokens])).toEqual([['operator-test', 321]]);
    const table = await runCli(['usage'], { env });
    expect(table.stdout).toContain('operator-test');
    expect(table.stdout).toContain('300 (93%)');
  });
});

describe('doctor', () => {
  it('reports a malformed OTLP endpoint as a failed check with its fix, not a crash', async () => {
    const result = await runCli(['doctor'], {
      env: { ...writeTestConfig('http://127.0.0.1:9/v1').env, OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' },
    });
    expect(result.stdout).toMatch(
      /FAIL tracing: OTEL_EXPORTER_OTLP_ENDPOINT "collector:4318" is not an http\(s\) URL/,
    );
    expect(result.stdout).toContain('fix: correct the OTEL_EXPORTER_OTLP_* variables');
  });
});
