import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  approve,
  createTaskScript,
  dispatch,
  getResults,
  reply,
  run,
  scriptModels,
} from './support/agent-scripts.ts';
import { freePort, startServer } from './support/cli.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { writeTestConfig } from './support/steward.ts';

/*
 * Agent scenarios through `POST /api/chat` of a real `steward start` server (its embedded
 * database), plain JSON and as a server-sent event stream, and the trace of a turn from
 * `GET /api/turns/:id`.
 */

type SseEvent = { event: string; data: unknown };

/** Splits a complete `text/event-stream` body into its events. */
function parseSse(body: string): SseEvent[] {
  return body
    .split(/\n\n+/)
    .filter((block) => block.trim())
    .map((block) => {
      const lines = block.split('\n');
      const event =
        lines
          .find((line) => line.startsWith('event:'))
          ?.slice(6)
          .trim() ?? 'message';
      const data = lines
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      return { event, data: JSON.parse(data) as unknown };
    });
}

type Trace = {
  turn: { status: string; reply: string };
  orchestrator_calls: unknown[];
  agents: Array<{
    agent_id: string;
    depends_on: string[];
    status: string;
    result: string;
    skill_calls: Array<{ command: string; status: string }>;
  }>;
  direct_skill_calls: unknown[];
};

const DIAMOND = [
  { agent_id: 'a', mission: 'List the open tasks', skills: ['tasks.search'] },
  { agent_id: 'b', mission: 'Pick the urgent ones', skills: ['tasks.search'], depends_on: ['a'] },
  { agent_id: 'c', mission: 'Pick the quick ones', skills: ['tasks.search'], depends_on: ['a'] },
  { agent_id: 'd', mission: 'Write the plan', skills: ['tasks.search'], depends_on: ['b', 'c'] },
];

let fake: FakeLlm;
let server: Awaited<ReturnType<typeof startServer>>;
beforeAll(async () => {
  fake = await startFakeLlm();
  const { env } = writeTestConfig(fake.url);
  server = await startServer({ env: { ...env, PORT: String(await freePort()) } });
});
afterAll(async () => {
  const code = await server?.stop('SIGTERM');
  await fake?.close();
  expect(code).toBe(0);
});
afterEach(() => {
  fake.reset();
});

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

describe('POST /api/chat', () => {
  it('answers with {reply, conversationId, turnId, status, usage} after an agent created the task', async () => {
    const models = scriptModels(fake, {
      orchestrator: [
        dispatch({
          agent_id: 'creator',
          mission: 'Create the task "Book dentist"',
          skills: ['tasks.create'],
        }),
        getResults(),
        reply('Added "Book dentist".'),
      ],
      agents: { creator: [run('tasks.create --title "Book dentist"'), reply('Created "Book dentist".')] },
      sentinel: [approve()],
    });

    const response = await post('/api/chat', { user: 'http-json', text: 'Add a task to book the dentist' });

    models.assertDone();
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual([
      'conversationId',
      'receipts',
      'reply',
      'status',
      'turnId',
      'usage',
    ]);
    // On the API the receipts are data; the reply text has no receipt lines.
    expect(body).toMatchObject({ reply: 'Added "Book dentist".', status: 'completed' });
    expect(body.receipts).toEqual([
      {
        skill: 'tasks.create',
        status: 'done',
        summary: expect.stringMatching(/^Book dentist \(t_[a-z0-9]+\)$/),
        execution_id: expect.any(String),
      },
    ]);
    expect(models.sentinelRequests()).toHaveLength(1);
    // The sentinel's decision, with its reasoning, is in the turn's trace.
    const trace = (await (await fetch(`${server.url}/api/turns/${String(body.turnId)}`)).json()) as {
      sentinel_decisions: Array<Record<string, unknown>>;
    };
    expect(trace.sentinel_decisions).toEqual([
      expect.objectContaining({
        skill: 'tasks.create',
        command: 'tasks.create --title "Book dentist"',
        approved: true,
        reasoning: expect.any(String),
        execution_id: expect.any(String),
      }),
    ]);
    const tasks = await post('/api/run', { user: 'http-json', command: 'tasks.search --status all' });
    const found = (await tasks.json()) as { status: string; content: string };
    expect(found.status).toBe('ok');
    expect(found.content).toContain('Book dentist');
    expect(found.content.match(/\[t_/g)).toHaveLength(1);
  });

  it('carries receipts in the SSE done event; a terminal reply ends with their lines unless asked for data', async () => {
    let models = scriptModels(fake, createTaskScript('Pay rent'));
    const streamed = await post(
      '/api/chat',
      { user: 'http-receipts', text: 'Add a task to pay rent', channel: 'cli' },
      { accept: 'text/event-stream' },
    );
    const events = parseSse(await streamed.text());
    models.assertDone();
    const done = events.at(-1)!.data as { reply: string; receipts: Array<Record<string, unknown>> };
    expect(done.reply).toMatch(/^Added "Pay rent"\.\n\n✓ tasks\.create — Pay rent \(t_[a-z0-9]+\)$/);
    expect(done.receipts).toEqual([
      {
        skill: 'tasks.create',
        status: 'done',
        summary: expect.stringMatching(/^Pay rent \(t_/),
        execution_id: expect.any(String),
      },
    ]);
    const end = events.find((event) => event.event === 'turn_end')!.data as { receipts: unknown[] };
    expect(end.receipts).toHaveLength(1);

    models = scriptModels(fake, createTaskScript('Pay tax'));
    const asData = await post('/api/chat', {
      user: 'http-receipts',
      text: 'Add a task to pay tax',
      channel: 'cli',
      receipts: 'data',
    });
    models.assertDone();
    const body = (await asData.json()) as { reply: string; receipts: unknown[] };
    expect(body.reply).toBe('Added "Pay tax".');
    expect(body.receipts).toHaveLength(1);
  });

  it('streams the turn as events (Accept: text/event-stream), and GET /api/turns/:id traces the diamond', async () => {
    const models = scriptModels(fake, {
      orchestrator: [dispatch(...DIAMOND), getResults(), reply('Here is your plan for today.')],
      agents: {
        a: [run('tasks.search'), reply('A-RESULT: no open tasks.')],
        b: [reply('B-RESULT: nothing urgent.')],
        c: [reply('C-RESULT: nothing quick.')],
        d: [reply('D-RESULT: a free day.')],
      },
    });

    const response = await post(
      '/api/chat',
      { user: 'http-stream', text: 'Plan my day' },
      { accept: 'text/event-stream' },
    );

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const events = parseSse(await response.text());
    models.assertDone();
    const names = events.map((event) => event.event);
    expect(names[0]).toBe('turn_start');
    expect(names.at(-2)).toBe('turn_end');
    expect(names.at(-1)).toBe('done');
    expect(names.filter((name) => name === 'agent_start')).toHaveLength(4);
    expect(names.filter((name) => name === 'agent_end')).toHaveLength(4);
    const agentEvent = (name: string, agentId: string) =>
      events.findIndex(
        (event) => event.event === name && (event.data as { agentId?: string }).agentId === agentId,
      );
    expect(agentEvent('agent_start', 'd')).toBeGreaterThan(agentEvent('agent_end', 'b'));
    expect(agentEvent('agent_start', 'd')).toBeGreaterThan(agentEvent('agent_end', 'c'));
    const streamed = events
      .filter((event) => event.event === 'text_delta')
      .map((event) => (event.data as { text: string }).text)
      .join('');
    expect(streamed).toBe('Here is your plan for today.');
    const done = events.at(-1)!.data as { reply: string; status: string; turnId: string };
    expect(done).toMatchObject({ reply: 'Here is your plan for today.', status: 'completed', receipts: [] });

    const traced = await fetch(`${server.url}/api/turns/${done.turnId}`);
    expect(traced.status).toBe(200);
    const trace = (await traced.json()) as Trace;
    expect(trace.turn).toMatchObject({ status: 'completed', reply: 'Here is your plan for today.' });
    expect(trace.orchestrator_calls).toHaveLength(3);
    expect(trace.direct_skill_calls).toEqual([]);
    // One key style throughout: no camelCase key anywhere in the trace.
    expect(JSON.stringify(trace)).not.toMatch(/"[a-z]+[A-Z][A-Za-z]*":/);
    const agents = [...trace.agents].sort((x, y) => (x.agent_id < y.agent_id ? -1 : 1));
    expect(
      agents.map((agent) => ({
        agentId: agent.agent_id,
        dependsOn: agent.depends_on,
        status: agent.status,
        skillCalls: agent.skill_calls.map((call) => ({ command: call.command, status: call.status })),
      })),
    ).toEqual([
      {
        agentId: 'a',
        dependsOn: [],
        status: 'completed',
        skillCalls: [{ command: 'tasks.search', status: 'ok' }],
      },
      { agentId: 'b', dependsOn: ['a'], status: 'completed', skillCalls: [] },
      { agentId: 'c', dependsOn: ['a'], status: 'completed', skillCalls: [] },
      { agentId: 'd', dependsOn: ['b', 'c'], status: 'completed', skillCalls: [] },
    ]);
    expect(agents[3]!.result).toBe('D-RESULT: a free day.');

    const missing = await fetch(`${server.url}/api/turns/no-such-turn`);
    expect(missing.status).toBe(404);
  });
});
