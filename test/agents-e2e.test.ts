/** What a sub-agent's result looks like to the model: data, fenced with its origin. */
const fenced = (agentId: string, text: string) =>
  `<external source="agent:${agentId}">\n${text}\n</external>`;

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TurnOutcome } from '../src/agents/turn-engine.ts';
import { ensureUser } from '../src/users/index.ts';
import {
  agentBrief,
  approve,
  callTool,
  dispatch,
  forever,
  getResults,
  lastToolResult,
  messageText,
  overlapInTime,
  refuse,
  reply,
  run,
  scriptModels,
  slow,
  toolResults,
} from './support/agent-scripts.ts';
import { backends } from './support/db.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { startTestSteward, type TestSteward } from './support/steward.ts';

/*
 * Every agent scenario end to end through the turn engine, over the scripted fake LLM, on each
 * database backend: what the user gets back, what is in the database, and what each model was shown.
 */

type AgentsResult = {
  agents: Array<{
    agent_id: string;
    status: string;
    result: string;
    error?: string;
    skipped_because?: string;
  }>;
};

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const DATE = /\d{4}-\d{2}-\d{2}/;

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake?.close();
});

for (const backend of backends()) {
  describe(`agents end to end [${backend}]`, () => {
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
    const tasksOf = (userId: string) =>
      db().query<{ title: string; status: string; priority: string }>(
        'SELECT title, status, priority FROM tasks WHERE user_id = $1 ORDER BY title',
        [userId],
      );
    const skillCalls = (userId: string) =>
      db().query<{ command: string; status: string; agent_id: string | null; error: string | null }>(
        "SELECT command, status, agent_id, error FROM skill_executions WHERE user_id = $1 AND kind = 'skill' ORDER BY started_at",
        [userId],
      );
    /** Creates a task as the user would from `steward run`, and returns its id. */
    const seedTask = async (userId: string, command: string): Promise<string> => {
      await ensureUser(db(), userId, { timezone: 'UTC' });
      const outcome = await steward.runtime.executor.execute({
        command,
        caller: { kind: 'cli' },
        user: { id: userId, timezone: 'UTC' },
        confirmed: true,
      });
      const id = /\[(t_[a-z0-9]+)\]/.exec(outcome.content)?.[1];
      if (outcome.status !== 'ok' || !id) throw new Error(`could not seed a task: ${outcome.content}`);
      return id;
    };

    it('answers a read-only question by running the search itself, with no sub-agent', async () => {
      await seedTask('reader', 'tasks.create --title "Quarterly report draft" --priority high');
      const models = scriptModels(fake, {
        orchestrator: [run('tasks.search --query report'), reply('You have one: Quarterly report draft.')],
      });

      const outcome = await say('reader', 'Which tasks mention the report?');

      models.assertDone();
      expect(outcome).toMatchObject({ status: 'completed', reply: 'You have one: Quarterly report draft.' });
      const [, second] = models.orchestratorRequests();
      expect(lastToolResult(second!)).toContain('Quarterly report draft');
      expect(models.agentRequests()).toHaveLength(0);
      expect(await skillCalls('reader')).toEqual([
        // The seeding call ran outside any agent too; only the search belongs to the turn.
        expect.objectContaining({ command: 'tasks.create --title "Quarterly report draft" --priority high' }),
        { command: 'tasks.search --query report', status: 'ok', agent_id: null, error: null },
      ]);
    });

    it('delegates a change to one agent, whose command the sentinel checks from the request, mission and command alone', async () => {
      const mission = 'Create a task "Buy milk" with high priority';
      const command = 'tasks.create --title "Buy milk" --priority high';
      const models = scriptModels(fake, {
        orchestrator: [
          dispatch({ agent_id: 'creator', mission, skills: ['tasks.create'] }),
          getResults(),
          reply('Done: I added "Buy milk".'),
        ],
        agents: { creator: [run(command), reply('Created the task "Buy milk".')] },
        sentinel: [approve('The user asked for this task.')],
      });

      const outcome = await say('buyer', 'Add a task to buy milk, high priority');

      models.assertDone();
      // The reply ends with the receipt Steward writes from the execution record.
      expect(outcome.status).toBe('completed');
      expect(outcome.reply).toMatch(
        /^Done: I added "Buy milk"\.\n\n✓ tasks\.create — Buy milk \(t_[a-z0-9]+\)$/,
      );
      expect(outcome.receipts).toEqual([
        {
          skill: 'tasks.create',
          status: 'done',
          summary: expect.stringMatching(/^Buy milk \(t_[a-z0-9]+\)$/),
          executionId: expect.any(String),
        },
      ]);
      expect(await tasksOf('buyer')).toEqual([{ title: 'Buy milk', status: 'todo', priority: 'high' }]);

      const [sentinel] = models.sentinelRequests();
      expect(models.sentinelRequests()).toHaveLength(1);
      const shown = sentinel!.body.messages ?? [];
      expect(sentinel!.body.tools).toBeUndefined();
      expect(shown.map((message) => message.role)).toEqual(['system', 'user']);
      expect(messageText(shown[0]!.content)).not.toContain('milk');
      expect(messageText(shown[1]!.content)).toBe(
        `User's request: Add a task to buy milk, high priority\nAgent's mission: ${mission}\nProposed command: ${command}`,
      );

      const results = JSON.parse(lastToolResult(models.orchestratorRequests()[2]!)) as AgentsResult;
      expect(results.agents).toMatchObject([
        {
          agent_id: 'creator',
          status: 'completed',
          result: fenced('creator', 'Created the task "Buy milk".'),
        },
      ]);
      const decisions = await db().query<{ approved: boolean; command: string }>(
        'SELECT approved, command FROM sentinel_decisions WHERE user_id = $1',
        ['buyer'],
      );
      expect(decisions).toEqual([{ approved: true, command }]);
    });

    it('runs two independent agents at the same time', async () => {
      const models = scriptModels(fake, {
        orchestrator: [
          dispatch(
            { agent_id: 'garden', mission: 'Find the open garden tasks', skills: ['tasks.search'] },
            { agent_id: 'house', mission: 'Find the open house tasks', skills: ['tasks.search'] },
          ),
          getResults(),
          reply('Nothing open in the garden or the house.'),
        ],
        agents: {
          garden: [slow(200, run('tasks.search --query garden')), slow(200, reply('No garden tasks.'))],
          house: [slow(200, run('tasks.search --query house')), slow(200, reply('No house tasks.'))],
        },
      });

      const outcome = await say('parallel', 'Anything open for the garden or the house?');

      models.assertDone();
      expect(outcome.status).toBe('completed');
      const [garden] = models.agentRequests('garden');
      const [house] = models.agentRequests('house');
      expect(overlapInTime(garden!, house!)).toBe(true);
      const results = JSON.parse(lastToolResult(models.orchestratorRequests()[2]!)) as AgentsResult;
      expect(results.agents.map((agent) => [agent.agent_id, agent.status, agent.result])).toEqual([
        ['garden', 'completed', fenced('garden', 'No garden tasks.')],
        ['house', 'completed', fenced('house', 'No house tasks.')],
      ]);
    });

    it('hands the result of a to b in a serial chain', async () => {
      const taskId = await seedTask('chain', 'tasks.create --title "Renew passport"');
      const models = scriptModels(fake, {
        orchestrator: [
          dispatch(
            { agent_id: 'finder', mission: 'Find the id of the passport task', skills: ['tasks.search'] },
            {
              agent_id: 'closer',
              mission: 'Mark the passport task as done',
              skills: ['tasks.update'],
              depends_on: ['finder'],
            },
          ),
          getResults(),
          reply('Marked "Renew passport" as done.'),
        ],
        agents: {
          finder: [
            run('tasks.search --query passport'),
            (request) =>
              reply(`The passport task is ${/\[(t_[a-z0-9]+)\]/.exec(lastToolResult(request))?.[1]}.`),
          ],
          closer: [
            (request) =>
              run(`tasks.update --id ${/(t_[a-z0-9]+)/.exec(agentBrief(request))?.[1]} --status done`),
            reply('Marked it done.'),
          ],
        },
        sentinel: [approve()],
      });

      const outcome = await say('chain', 'I renewed my passport, tick it off');

      models.assertDone();
      expect(outcome.status).toBe('completed');
      const [closerFirst] = models.agentRequests('closer');
      expect(agentBrief(closerFirst!)).toContain(
        `Result from finder (completed):\n${fenced('finder', `The passport task is ${taskId}.`)}`,
      );
      expect(await tasksOf('chain')).toEqual([
        { title: 'Renew passport', status: 'done', priority: 'medium' },
      ]);
    });

    it('runs a diamond: b and c in parallel after a, d with both their results', async () => {
      const models = scriptModels(fake, {
        orchestrator: [
          dispatch(
            { agent_id: 'a', mission: 'List the open tasks', skills: ['tasks.search'] },
            { agent_id: 'b', mission: 'Pick the urgent ones', skills: ['tasks.search'], depends_on: ['a'] },
            { agent_id: 'c', mission: 'Pick the quick ones', skills: ['tasks.search'], depends_on: ['a'] },
            { agent_id: 'd', mission: 'Write the plan', skills: ['tasks.search'], depends_on: ['b', 'c'] },
          ),
          getResults(),
          reply('Here is your plan.'),
        ],
        agents: {
          a: [run('tasks.search'), reply('A-RESULT: no open tasks.')],
          b: [slow(200, reply('B-RESULT: nothing urgent.'))],
          c: [slow(200, reply('C-RESULT: nothing quick.'))],
          d: [reply('D-RESULT: a free day.')],
        },
      });

      const outcome = await say('diamond', 'Plan my day');

      models.assertDone();
      expect(outcome).toMatchObject({ status: 'completed', reply: 'Here is your plan.' });
      const [b] = models.agentRequests('b');
      const [c] = models.agentRequests('c');
      const [d] = models.agentRequests('d');
      expect(agentBrief(b!)).toContain(
        `Result from a (completed):\n${fenced('a', 'A-RESULT: no open tasks.')}`,
      );
      expect(agentBrief(c!)).toContain(
        `Result from a (completed):\n${fenced('a', 'A-RESULT: no open tasks.')}`,
      );
      expect(overlapInTime(b!, c!)).toBe(true);
      expect(agentBrief(d!)).toContain(
        `Result from b (completed):\n${fenced('b', 'B-RESULT: nothing urgent.')}`,
      );
      expect(agentBrief(d!)).toContain(
        `Result from c (completed):\n${fenced('c', 'C-RESULT: nothing quick.')}`,
      );
      const rows = await db().query<{ agent_id: string; depends_on: string[]; status: string }>(
        "SELECT agent_id, depends_on, status FROM skill_executions WHERE turn_id = $1 AND kind = 'agent' ORDER BY agent_id",
        [outcome.turnId],
      );
      expect(rows).toEqual([
        { agent_id: 'a', depends_on: [], status: 'completed' },
        { agent_id: 'b', depends_on: ['a'], status: 'completed' },
        { agent_id: 'c', depends_on: ['a'], status: 'completed' },
        { agent_id: 'd', depends_on: ['b', 'c'], status: 'completed' },
      ]);
    });

    it('skips the dependents of an agent whose model keeps failing, without ever calling them', async () => {
      const models = scriptModels(fake, {
        orchestrator: [
          dispatch(
            { agent_id: 'lookup', mission: 'Find the travel tasks', skills: ['tasks.search'] },
            {
              agent_id: 'planner',
              mission: 'Plan the trip from the travel tasks',
              skills: ['tasks.search'],
              depends_on: ['lookup'],
            },
          ),
          getResults(),
          reply('I could not look up your travel tasks, so I did not plan the trip.'),
        ],
        // max_retries is 2 in the test config: three attempts, then the agent fails.
        agents: { lookup: [{ status: 500 }, { status: 500 }, { status: 500 }], planner: [] },
      });

      const outcome = await say('traveller', 'Plan my trip from my travel tasks');

      models.assertDone();
      expect(outcome.status).toBe('completed');
      expect(models.agentRequests('lookup')).toHaveLength(3);
      expect(models.agentRequests('planner')).toHaveLength(0);
      const results = JSON.parse(lastToolResult(models.orchestratorRequests()[2]!)) as AgentsResult;
      const [lookup, planner] = results.agents;
      expect(lookup).toMatchObject({ agent_id: 'lookup', status: 'failed' });
      expect(lookup!.error).toContain('500');
      expect(planner).toMatchObject({ agent_id: 'planner', status: 'skipped' });
      expect(planner!.skipped_because).toMatch(/^dependency "lookup" failed: .*500/);
    });

    it('refuses a skill the agent was not granted and runs nothing', async () => {
      const models = scriptModels(fake, {
        orchestrator: [
          dispatch({
            agent_id: 'looker',
            mission: 'Check whether a tax task exists',
            skills: ['tasks.search'],
          }),
          getResults(),
          reply('There is no tax task.'),
        ],
        agents: {
          looker: [run('tasks.create --title "Do taxes"'), reply('I was not allowed to create it.')],
        },
      });

      const outcome = await say('granted', 'Do I have a tax task?');

      models.assertDone();
      expect(outcome.status).toBe('completed');
      expect(await tasksOf('granted')).toEqual([]);
      expect(lastToolResult(models.agentRequests('looker')[1]!)).toMatch(
        /^Error: Refused: tasks\.create is not among this agent's granted skills \(tasks\.search\)/,
      );
      expect(await skillCalls('granted')).toEqual([
        expect.objectContaining({
          command: 'tasks.create --title "Do taxes"',
          status: 'refused',
          agent_id: 'looker',
        }),
      ]);
      expect(models.sentinelRequests()).toHaveLength(0);
    });

    it('refuses a mutating skill the orchestrator runs itself and tells it to delegate', async () => {
      const models = scriptModels(fake, {
        orchestrator: [run('tasks.create --title "Do taxes"'), reply('I will have an agent do that.')],
      });

      const outcome = await say('direct-writer', 'Add a task to do my taxes');

      models.assertDone();
      expect(outcome.status).toBe('completed');
      const result = lastToolResult(models.orchestratorRequests()[1]!);
      expect(result).toContain('tasks.create changes data, so the orchestrator cannot run it directly');
      expect(result).toContain('dispatch_agent with skills ["tasks.create"]');
      expect(await tasksOf('direct-writer')).toEqual([]);
      expect((await skillCalls('direct-writer')).map((call) => call.status)).toEqual(['refused']);
      expect(models.sentinelRequests()).toHaveLength(0);
    });

    it('stops an orchestrator that never stops calling tools, then continues without redoing done work', async () => {
      const models = scriptModels(fake, {
        orchestrator: [
          dispatch({ agent_id: 'rent', mission: 'Create a task "Pay rent"', skills: ['tasks.create'] }),
          getResults(),
          forever(callTool('get_skill', { path: 'tasks' })),
        ],
        agents: { rent: [run('tasks.create --title "Pay rent"'), reply('Created "Pay rent".')] },
        sentinel: [approve()],
      });

      const paused = await say('looper', 'Add a task to pay rent');

      expect(paused.status).toBe('paused');
      expect(models.orchestratorRequests()).toHaveLength(6);
      expect(paused.reply).toContain(
        'I stopped because I reached the limit of 6 planning steps for this turn.',
      );
      expect(paused.reply).toContain('- rent: Created "Pay rent".');
      expect(paused.reply).toContain('Reply "continue" to go on from here.');
      expect(await tasksOf('looper')).toHaveLength(1);

      models.extend({ orchestrator: [getResults(), reply('All set: "Pay rent" is on your list.')] });
      const resumed = await say('looper', 'continue', paused.conversationId);

      models.assertDone();
      expect(resumed).toMatchObject({ status: 'completed', reply: 'All set: "Pay rent" is on your list.' });
      expect(await tasksOf('looper')).toEqual([{ title: 'Pay rent', status: 'todo', priority: 'medium' }]);
      expect(models.agentRequests('rent')).toHaveLength(2);
      expect(models.sentinelRequests()).toHaveLength(1);
      const [, , , , , , firstResumed, lastResumed] = models.orchestratorRequests();
      const note = firstResumed!.body.messages?.at(-1);
      expect(note?.role).toBe('system');
      expect(messageText(note?.content)).toContain('The user said to continue');
      const results = JSON.parse(lastToolResult(lastResumed!)) as AgentsResult;
      expect(results.agents).toMatchObject([
        { agent_id: 'rent', status: 'completed', result: fenced('rent', 'Created "Pay rent".') },
      ]);
    });

    it('asks the user when the sentinel refuses, and runs exactly that command once on "yes"', async () => {
      const command = 'tasks.create --title "Renew car insurance" --priority critical';
      const reasoning = 'The user did not ask for critical priority.';
      const models = scriptModels(fake, {
        orchestrator: [
          dispatch({
            agent_id: 'insurer',
            mission: 'Create a task to renew the car insurance',
            skills: ['tasks.create'],
          }),
          getResults(),
        ],
        agents: { insurer: [run(command)] },
        sentinel: [refuse(reasoning)],
      });

      const paused = await say('careful', 'Remind me to renew the car insurance');

      expect(paused.status).toBe('paused');
      expect(paused.reply).toContain(
        `Before I run \`${command}\` I need your OK: the safety check said ${reasoning}`,
      );
      expect(paused.reply).toContain('Reply "yes" to run exactly that command once');
      expect(paused.reply).toMatch(
        /\n\n✗ tasks\.create — Renew car insurance \(not run: the safety check stopped it\)$/,
      );
      expect(await tasksOf('careful')).toEqual([]);
      const decisions = await db().query<{ approved: boolean; reasoning: string; command: string }>(
        'SELECT approved, reasoning, command FROM sentinel_decisions WHERE user_id = $1',
        ['careful'],
      );
      expect(decisions).toEqual([{ approved: false, reasoning, command }]);

      models.extend({ orchestrator: [reply('Done: "Renew car insurance" is on your list.')] });
      const confirmed = await say('careful', 'yes', paused.conversationId);

      models.assertDone();
      expect(confirmed.status).toBe('completed');
      expect(confirmed.reply).toMatch(
        /^Done: "Renew car insurance" is on your list\.\n\n✓ tasks\.create — Renew car insurance \(t_[a-z0-9]+\)$/,
      );
      expect(await tasksOf('careful')).toEqual([
        { title: 'Renew car insurance', status: 'todo', priority: 'critical' },
      ]);
      expect((await skillCalls('careful')).map((call) => [call.command, call.status, call.agent_id])).toEqual(
        [
          [command, 'refused', 'insurer'],
          [command, 'ok', 'insurer'],
        ],
      );
      expect(models.sentinelRequests()).toHaveLength(1);
      expect(models.agentRequests('insurer')).toHaveLength(1);
      const note = models.orchestratorRequests()[2]!.body.messages?.at(-1);
      expect(messageText(note?.content)).toContain(`The user confirmed. The command ${command} was run once`);
    });

    it('runs a call whose arguments are repaired JSON, tells the model, and never fails the turn', async () => {
      const models = scriptModels(fake, {
        orchestrator: [
          callTool('get_skill', '{"path": "tasks"'),
          reply('Tasks can be created, searched, updated and archived.'),
        ],
      });

      const outcome = await say('malformed', 'What can you do with tasks?');

      models.assertDone();
      expect(outcome).toMatchObject({
        status: 'completed',
        reply: 'Tasks can be created, searched, updated and archived.',
      });
      const [, last] = models.orchestratorRequests();
      expect(toolResults(last!)).toHaveLength(1);
      expect(lastToolResult(last!)).toContain('were not valid JSON; they were repaired');
      expect(lastToolResult(last!)).toContain('tasks.create');
      const errors = await db().query<{ error_class: string }>(
        'SELECT error_class FROM llm_calls WHERE turn_id = $1 AND error_class IS NOT NULL',
        [outcome.turnId],
      );
      expect(errors).toEqual([]);
    });

    it('explains a hallucinated tool to the model and completes', async () => {
      const models = scriptModels(fake, {
        orchestrator: [
          callTool('send_email', { to: 'boss@example.com', body: 'Running late' }),
          reply('I cannot send email yet.'),
        ],
      });

      const outcome = await say('emailer', 'Email my boss that I am running late');

      models.assertDone();
      expect(outcome).toMatchObject({ status: 'completed', reply: 'I cannot send email yet.' });
      expect(lastToolResult(models.orchestratorRequests()[1]!)).toBe(
        'Unknown tool "send_email". Available tools: dispatch_agent, get_agent_results, get_skill, message_agent, run.',
      );
    });

    it('waits as long as a 429 asks (Retry-After) and then completes', async () => {
      const models = scriptModels(fake, {
        orchestrator: [{ status: 429, retryAfter: 1 }, reply('Hello! How can I help?')],
      });

      const outcome = await say('limited', 'Hello');

      models.assertDone();
      expect(outcome).toMatchObject({ status: 'completed', reply: 'Hello! How can I help?' });
      const [limited, retried] = models.orchestratorRequests();
      // Without Retry-After the first backoff is at most 500 ms.
      expect(retried!.receivedAt - limited!.finishedAt!).toBeGreaterThanOrEqual(900);
      const errors = await db().query<{ error_class: string }>(
        'SELECT error_class FROM llm_calls WHERE turn_id = $1 AND error_class IS NOT NULL',
        [outcome.turnId],
      );
      expect(errors).toEqual([{ error_class: 'rate_limit' }]);
    });

    it('sends a byte-identical system + tools prefix across turns and conversations, free of dates and ids', async () => {
      const models = scriptModels(fake, {
        orchestrator: [reply('Hi.'), reply('Still here.'), reply('Hello again.')],
      });

      const first = await say('cacher', 'Hi');
      await say('cacher', 'Are you there?', first.conversationId);
      const other = await say('cacher', 'A new topic');

      models.assertDone();
      expect(other.conversationId).not.toBe(first.conversationId);
      const requests = models.orchestratorRequests();
      expect(requests).toHaveLength(3);
      const prefixes = requests.map((request) =>
        JSON.stringify({ system: request.body.messages?.[0], tools: request.body.tools }),
      );
      expect(prefixes[1]).toBe(prefixes[0]);
      expect(prefixes[2]).toBe(prefixes[0]);
      expect(prefixes[0]).toContain('You are Steward');
      expect(prefixes[0]).toContain('get_agent_results');
      expect(prefixes[0]).not.toMatch(DATE);
      expect(prefixes[0]).not.toMatch(UUID);
      // The variable part right after it does carry the date: the prefix is stable because it was moved out.
      expect(messageText(requests[0]!.body.messages?.[1]?.content)).toMatch(DATE);
    });
  });
}
