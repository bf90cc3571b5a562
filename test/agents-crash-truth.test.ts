import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  dispatch,
  getResults,
  lastToolResult,
  messageText,
  reply,
  type ScriptedModels,
  scriptModels,
} from './support/agent-scripts.ts';
import { freePort, startServer } from './support/cli.ts';
import { answeringPostgres, type Cluster, startCluster } from './support/cluster.ts';
import { type FakeLlm, type FakeRequest, startFakeLlm } from './support/fake-llm.ts';
import { writeTestConfig } from './support/steward.ts';

/*
 * Issue 21, item 1: kill -9 while a sub-agent runs. The turn is run again after the crash from
 * the messages its first attempt stored (dispatch_agent → "Queued agent slow"); the model must
 * then be told the truth about that agent (interrupted, not an empty list), the trace must say
 * so, and a reply that claims the work anyway gets a receipt line that contradicts it.
 * On the embedded database (one process restarted) and with two instances on one PostgreSQL
 * database (the survivor recovers the turn).
 */

const server = await answeringPostgres();

type Trace = {
  turn: {
    status: string;
    reply: string;
    receipts: Array<{ skill: string; status: string; summary: string }>;
  };
  agents: Array<{ agent_id: string; status: string; error: string | null }>;
};

type AgentsResult = {
  agents: Array<{ agent_id: string; status: string; result: string; skill_calls?: unknown[] }>;
};

const MISSION = 'Create the task "Alpha plan" for the user';

/**
 * The orchestrator dispatches `slow` and asks for its results; `slow` never answers (the process
 * is killed while it waits). After the restart the turn runs again: the orchestrator asks for the
 * results once more and then claims the work regardless (a model that lies), so the receipt
 * must contradict it. `followUps` are extra orchestrator answers (later turns).
 */
function crashScript(fake: FakeLlm, followUps: string[] = []): ScriptedModels {
  return scriptModels(fake, {
    orchestrator: [
      dispatch({ agent_id: 'slow', mission: MISSION, skills: ['tasks.create'] }),
      getResults(),
      // After the restart: the turn runs again from what its first attempt stored.
      getResults(),
      reply("I've created the task Alpha plan."),
      ...followUps.map((text) => reply(text)),
    ],
    agents: { slow: [{ hang: true }] },
  });
}

/** Opens POST /api/chat as an event stream and resolves with the turn's ids once it started. */
async function startTurn(
  url: string,
  body: Record<string, unknown>,
): Promise<{ turnId: string; conversationId: string }> {
  const response = await fetch(`${url}/api/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', connection: 'close' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended before turn_start: ${buffer}`);
    buffer += decoder.decode(value, { stream: true });
    const match = /event: turn_start\ndata: (.*)\n/.exec(buffer);
    if (match) {
      // Keep reading in the background until the process dies, so the turn is not cancelled.
      void (async () => {
        for (;;) if ((await reader.read().catch(() => ({ done: true }))).done) return;
      })();
      return JSON.parse(match[1]!) as { turnId: string; conversationId: string };
    }
  }
}

async function trace(url: string, turnId: string): Promise<Trace> {
  const response = await fetch(`${url}/api/turns/${turnId}`);
  expect(response.status).toBe(200);
  return (await response.json()) as Trace;
}

/** What the model was told by the get_agent_results call after the restart. */
function resultsAfterRestart(models: ScriptedModels): AgentsResult {
  const request: FakeRequest = models.orchestratorRequests()[3]!;
  return JSON.parse(lastToolResult(request)) as AgentsResult;
}

function expectTruthAfterCrash(models: ScriptedModels, turn: Trace): void {
  // The turn that ran again still showed the model its dispatch…
  const history = models.orchestratorRequests()[2]!.body.messages ?? [];
  expect(history.map((message) => messageText(message.content)).join('\n')).toContain('Queued agent slow');
  // …and the model is told the agent was interrupted, never an empty list.
  const told = resultsAfterRestart(models);
  expect(told.agents).toHaveLength(1);
  expect(told.agents[0]).toMatchObject({ agent_id: 'slow', status: 'interrupted' });
  expect(told.agents[0]!.result).toMatch(/interrupted/i);
  // The trace shows the agent as interrupted.
  expect(turn.agents.map((agent) => [agent.agent_id, agent.status])).toEqual([['slow', 'interrupted']]);
  // The reply claims the task, but no tasks.create ran: the receipt says so.
  expect(turn.turn.reply).toContain("I've created the task Alpha plan.");
  expect(turn.turn.reply).toMatch(/^✗ tasks\.create — not run$/m);
  expect(turn.turn.receipts).toEqual([
    expect.objectContaining({ skill: 'tasks.create', status: 'failed', summary: 'not run' }),
  ]);
}

describe('kill -9 during a sub-agent [pglite, one process restarted]', { timeout: 180_000 }, () => {
  let fake: FakeLlm;
  beforeAll(async () => {
    fake = await startFakeLlm();
  });
  afterAll(async () => {
    await fake?.close();
  });

  it('tells the model the agent was interrupted, shows it in the trace, and contradicts a false claim', async () => {
    const models = crashScript(fake);
    const { env } = writeTestConfig(fake.url);
    const port = String(await freePort());
    let steward = await startServer({ env: { ...env, PORT: port } });
    try {
      const { turnId } = await startTurn(steward.url, {
        text: 'Create a task called Alpha plan',
        channel: 'cli',
      });
      await expect.poll(() => models.agentRequests('slow').length, { timeout: 30_000 }).toBe(1);
      expect(await steward.stop('SIGKILL')).toBeNull();

      // The restart recovers the turn at start and runs it again from its stored messages.
      steward = await startServer({ env: { ...env, PORT: String(await freePort()) } });
      await expect
        .poll(async () => (await trace(steward.url, turnId)).turn.status, { timeout: 60_000 })
        .toBe('completed');
      models.assertDone();
      expectTruthAfterCrash(models, await trace(steward.url, turnId));
    } finally {
      await steward.stop('SIGTERM');
      fake.respondWith(null);
    }
  });
});

describe.skipIf(!server)('kill -9 during a sub-agent [postgres, two instances]', { timeout: 300_000 }, () => {
  let fake: FakeLlm;
  let cluster: Cluster;
  beforeAll(async () => {
    fake = await startFakeLlm();
    cluster = await startCluster({ count: 2, fake });
  }, 240_000);
  afterAll(async () => {
    await cluster?.stop();
    await fake?.close();
  }, 60_000);

  it('the survivor tells the model the agent was interrupted, the trace says so, the claim is contradicted', async () => {
    const models = crashScript(fake, ['It is not done yet: the agent was interrupted.']);
    const [first, survivor] = cluster.instances;
    const { turnId, conversationId } = await startTurn(first!.url, {
      text: 'Create a task called Alpha plan',
      user: 'crash-user',
      channel: 'cli',
    });
    await expect.poll(() => models.agentRequests('slow').length, { timeout: 30_000 }).toBe(1);
    expect(await first!.stop('SIGKILL')).toBeNull();

    // The user writes again through the other instance: it recovers the orphaned turn first.
    const next = await cluster.chat(1, {
      user: 'crash-user',
      text: 'Is it done?',
      conversation: conversationId,
      channel: 'cli',
    });
    expect(next.status).toBe(200);
    expect(((await next.json()) as { reply: string }).reply).toBe(
      'It is not done yet: the agent was interrupted.',
    );
    models.assertDone();
    const crashed = await trace(survivor!.url, turnId);
    expect(crashed.turn.status).toBe('completed');
    expectTruthAfterCrash(models, crashed);
  });
});
