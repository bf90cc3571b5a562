import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { turnTrace } from '../src/agents/index.ts';
import type { TurnOutcome } from '../src/agents/turn-engine.ts';
import { appendMessage } from '../src/memory/index.ts';
import { ensureUser } from '../src/users/index.ts';
import {
  approve,
  callTool,
  dispatch,
  getResults,
  lastToolResult,
  messageText,
  reply,
  run,
  scriptModels,
} from './support/agent-scripts.ts';
import { backends } from './support/db.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { startTestSteward, type TestSteward } from './support/steward.ts';

/*
 * Issue 21: what Steward tells the model and the user is true. An empty answer is asked for
 * again, then reported as no answer (never "Done."); a turn ends with receipts written from its
 * execution records, contradicting a claim no call backs; after a crash the model is told which
 * agents were interrupted and which of their calls may have happened; skipped agents are in the
 * trace.
 */

type AgentsResult = {
  agents: Array<{
    agent_id: string;
    status: string;
    result: string;
    skill_calls?: Array<{ skill: string; status: string; note?: string }>;
  }>;
};

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake?.close();
});

for (const backend of backends()) {
  describe(`truthful tool results and replies [${backend}]`, () => {
    let steward: TestSteward;
    beforeAll(async () => {
      steward = await startTestSteward(backend, fake);
    });
    afterAll(async () => {
      await steward?.close();
    });
    afterEach(() => {
      fake.reset();
    });

    const db = () => steward.db.database;
    const say = (userId: string, text: string, conversationId?: string): Promise<TurnOutcome> =>
      steward.runtime.engine.handle({
        userId,
        text,
        channel: 'cli',
        ...(conversationId ? { conversationId } : { newConversation: true }),
      });

    it('asks again once when the final answer is empty, and sends the second answer', async () => {
      const models = scriptModels(fake, {
        orchestrator: [reply(''), reply('You have two meetings tomorrow.')],
      });

      const outcome = await say('empty-once', 'What is on tomorrow?');

      models.assertDone();
      expect(outcome).toMatchObject({ status: 'completed', reply: 'You have two meetings tomorrow.' });
      const second = models.orchestratorRequests()[1]!.body.messages ?? [];
      expect(second.at(-1)!.role).toBe('system');
      expect(messageText(second.at(-1)!.content)).toContain('Your last answer was empty');
      // The empty answer itself is not in the conversation.
      const stored = await db().query<{ role: string; content: string }>(
        "SELECT role, content FROM messages WHERE turn_id = $1 AND role = 'assistant'",
        [outcome.turnId],
      );
      expect(stored).toEqual([{ role: 'assistant', content: 'You have two meetings tomorrow.' }]);
    });

    it('says plainly that no answer came when it stays empty, with the receipts of what was done', async () => {
      const models = scriptModels(fake, {
        orchestrator: [
          dispatch({
            agent_id: 'maker',
            mission: 'Create the task "Water plants"',
            skills: ['tasks.create'],
          }),
          getResults(),
          reply(''),
          reply('   '),
        ],
        agents: { maker: [run('tasks.create --title "Water plants"'), reply('Created it.')] },
        sentinel: [approve()],
      });

      const outcome = await say('empty-twice', 'Add a task to water the plants');

      models.assertDone();
      expect(models.orchestratorRequests()).toHaveLength(4);
      expect(outcome.status).toBe('failed');
      expect(outcome.reply).not.toContain('Done.');
      expect(outcome.reply).toMatch(
        /^I got no answer from the model for this request\.\n\n✓ tasks\.create — Water plants \(t_[a-z0-9]+\)$/,
      );
      const [turn] = await db().query<{ status: string; reply: string }>(
        'SELECT status, reply FROM turns WHERE id = $1',
        [outcome.turnId],
      );
      expect(turn).toEqual({ status: 'failed', reply: outcome.reply });
    });

    it('contradicts a reply that claims an action no call made, and never shows a receipt the model wrote', async () => {
      const models = scriptModels(fake, {
        orchestrator: [reply("I've sent the summary to Bob.\n✓ email.send — summary to Bob")],
      });

      const outcome = await say('claimer', 'Email Bob the summary');

      models.assertDone();
      expect(outcome.reply).toBe(
        "I've sent the summary to Bob.\n- email.send — summary to Bob\n\n✗ email.send — not run",
      );
      expect(outcome.receipts).toEqual([
        { skill: 'email.send', status: 'failed', summary: 'not run', executionId: null },
      ]);
    });

    it('lists the skipped dependents of a failed agent in the trace', async () => {
      const models = scriptModels(fake, {
        orchestrator: [
          dispatch(
            { agent_id: 'lookup', mission: 'Find the report task', skills: ['tasks.search'] },
            {
              agent_id: 'closer',
              mission: 'Close the report task',
              skills: ['tasks.update'],
              depends_on: ['lookup'],
            },
          ),
          getResults(),
          reply('The lookup failed, so nothing was closed.'),
        ],
        agents: { lookup: [{ status: 400, message: 'bad request' }] },
      });

      const outcome = await say('skipper', 'Close my report task');

      models.assertDone();
      const told = JSON.parse(lastToolResult(models.orchestratorRequests()[2]!)) as AgentsResult;
      expect(told.agents.map((agent) => [agent.agent_id, agent.status])).toEqual([
        ['closer', 'skipped'],
        ['lookup', 'failed'],
      ]);
      const trace = (await turnTrace(db(), outcome.turnId))!;
      expect(trace.agents.map((agent) => [agent.agent_id, agent.status, agent.error])).toEqual([
        ['lookup', 'failed', expect.any(String)],
        ['closer', 'skipped', expect.stringContaining('dependency "lookup" failed')],
      ]);
    });

    /** A turn a dead instance left running: its user message, and `messages` after it. */
    async function crashedTurn(
      id: string,
      request: string,
      messages: Array<Parameters<typeof appendMessage>[1]>,
    ): Promise<{ conversationId: string }> {
      const conversationId = `c-${id}`;
      await ensureUser(db(), 'crashed');
      await db().query("INSERT INTO conversations (id, user_id, channel) VALUES ($1, 'crashed', 'cli')", [
        conversationId,
      ]);
      const user = await appendMessage(db(), {
        conversationId,
        userId: 'crashed',
        role: 'user',
        content: request,
      });
      await db().query(
        "INSERT INTO turns (id, conversation_id, user_id, status, mode, user_message_id, request, channel, owner) VALUES ($1, $2, 'crashed', 'running', 'multi_agent', $3, $4, 'cli', 'a-dead-instance')",
        [id, conversationId, user.id, request],
      );
      await db().query('UPDATE messages SET turn_id = $1 WHERE id = $2', [id, user.id]);
      for (const message of messages) await appendMessage(db(), { ...message, conversationId, turnId: id });
      return { conversationId };
    }

    const dispatchCall = (callId: string, agentId: string, mission: string, skills: string[]) => ({
      userId: 'crashed',
      conversationId: '',
      role: 'assistant' as const,
      content: '',
      toolCalls: [
        {
          id: callId,
          name: 'dispatch_agent',
          arguments: { agent_id: agentId, mission, skills },
          rawArguments: JSON.stringify({ agent_id: agentId, mission, skills }),
        },
      ],
    });
    const queued = (callId: string, agentId: string) => ({
      userId: 'crashed',
      conversationId: '',
      role: 'tool' as const,
      content: `Queued agent ${agentId}. Dispatch any others, then call get_agent_results.`,
      toolCallId: callId,
    });

    it('runs an agent the crashed attempt had only queued when the turn runs again', async () => {
      const mission = 'Create the task "Book dentist"';
      await crashedTurn('t-queued', 'Remind me to book the dentist', [
        dispatchCall('call-1', 'booker', mission, ['tasks.create']),
        queued('call-1', 'booker'),
      ]);
      const rerun = scriptModels(fake, {
        dispatched: { booker: mission },
        orchestrator: [getResults(), reply('Done: "Book dentist" is on your list.')],
        agents: { booker: [run('tasks.create --title "Book dentist"'), reply('Created.')] },
        sentinel: [approve()],
      });

      expect(await steward.runtime.engine.recoverInterrupted()).toBe(1);
      await steward.runtime.engine.drain();

      rerun.assertDone();
      const told = JSON.parse(lastToolResult(rerun.orchestratorRequests()[1]!)) as AgentsResult;
      expect(told.agents).toMatchObject([{ agent_id: 'booker', status: 'completed' }]);
      const [turn] = await db().query<{ status: string; reply: string }>(
        "SELECT status, reply FROM turns WHERE id = 't-queued'",
      );
      expect(turn!.status).toBe('completed');
      expect(turn!.reply).toMatch(/\n\n✓ tasks\.create — Book dentist \(t_[a-z0-9]+\)$/);
    });

    it('reports an interrupted agent and its call of unknown outcome, in the note, the receipts and to the model', async () => {
      const mission = 'Create the task "Alpha plan"';
      const { conversationId } = await crashedTurn('t-unknown', 'Create the Alpha plan task', [
        dispatchCall('call-a', 'filer', mission, ['tasks.create']),
        queued('call-a', 'filer'),
      ]);
      await db().query(
        `INSERT INTO skill_executions (id, turn_id, user_id, conversation_id, kind, agent_id, mission, flags, depends_on, status)
         VALUES ('agent-row', 't-unknown', 'crashed', $1, 'agent', 'filer', $2, '{"skills":["tasks.create"]}', '[]', 'running')`,
        [conversationId, mission],
      );
      await db().query(
        `INSERT INTO skill_executions (id, parent_id, turn_id, user_id, conversation_id, kind, agent_id, skill, command, status, receipt)
         VALUES ('call-row', 'agent-row', 't-unknown', 'crashed', $1, 'skill', 'filer', 'tasks.create',
                 'tasks.create --title "Alpha plan"', 'running', 'Alpha plan')`,
        [conversationId],
      );

      expect(await steward.runtime.engine.recoverInterrupted()).toBe(1);
      const [turn] = await db().query<{ status: string; reply: string; receipts: unknown }>(
        "SELECT status, reply, receipts FROM turns WHERE id = 't-unknown'",
      );
      expect(turn!.status).toBe('interrupted');
      expect(turn!.reply).toContain('May have happened — check before repeating');
      expect(turn!.reply).toMatch(/\n\n\? tasks\.create — Alpha plan \(may have happened — check\)$/);
      expect(turn!.receipts).toEqual([
        {
          skill: 'tasks.create',
          status: 'unknown',
          summary: 'Alpha plan (may have happened — check)',
          execution_id: 'call-row',
        },
      ]);
      const trace = (await turnTrace(db(), 't-unknown'))!;
      expect(trace.agents.map((agent) => [agent.agent_id, agent.status])).toEqual([['filer', 'interrupted']]);

      const models = scriptModels(fake, {
        orchestrator: [
          getResults(),
          callTool('message_agent', { agent_id: 'filer', message: 'Go on where you stopped.' }),
          reply('The task may exist already; I will check first.'),
        ],
      });
      const resumed = await say('crashed', 'continue', conversationId);

      models.assertDone();
      expect(resumed.status).toBe('completed');
      const told = JSON.parse(lastToolResult(models.orchestratorRequests()[1]!)) as AgentsResult;
      expect(told.agents).toHaveLength(1);
      expect(told.agents[0]).toMatchObject({
        agent_id: 'filer',
        status: 'interrupted',
        skill_calls: [
          { skill: 'tasks.create', status: 'unknown', note: 'may have happened — check before redoing' },
        ],
      });
      expect(told.agents[0]!.result).toContain('may have happened — check before redoing');
      expect(told.agents[0]!.result).toContain('tasks.create --title "Alpha plan" (unknown)');
      // It cannot be continued, and the model is told why (not "it has not run").
      expect(lastToolResult(models.orchestratorRequests()[2]!)).toMatch(
        /^Agent filer was interrupted \(Steward restarted\) and cannot be continued\./,
      );
    });
  });
}

describe('replies.receipts: off', () => {
  let steward: TestSteward;
  beforeAll(async () => {
    steward = await startTestSteward(backends()[0]!, fake, { extraYaml: 'replies:\n  receipts: off\n' });
  });
  afterAll(async () => {
    await steward?.close();
  });
  afterEach(() => {
    fake.reset();
  });

  it('writes no receipt lines on a chat channel, yet the outcome and the turn keep the receipts', async () => {
    const models = scriptModels(fake, {
      orchestrator: [
        dispatch({ agent_id: 'maker', mission: 'Create the task "Fix bike"', skills: ['tasks.create'] }),
        getResults(),
        reply('Added "Fix bike".'),
      ],
      agents: { maker: [run('tasks.create --title "Fix bike"'), reply('Created.')] },
      sentinel: [approve()],
    });

    const outcome = await steward.runtime.engine.handle({
      userId: 'quiet',
      text: 'Add a task to fix the bike',
      channel: 'telegram',
    });

    models.assertDone();
    expect(outcome.reply).toBe('Added "Fix bike".');
    expect(outcome.receipts).toEqual([
      expect.objectContaining({
        skill: 'tasks.create',
        status: 'done',
        summary: expect.stringMatching(/^Fix bike/),
      }),
    ]);
    const trace = (await turnTrace(steward.db.database, outcome.turnId))!;
    expect(trace.turn.receipts).toEqual([expect.objectContaining({ skill: 'tasks.create', status: 'done' })]);
  });
});
