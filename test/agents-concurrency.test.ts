import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.ts';
import { openPostgres } from '../src/db/index.ts';
import { silentLogger } from '../src/logging/index.ts';
import { createRuntime } from '../src/runtime.ts';
import { messageText } from './support/agent-scripts.ts';
import { backends, createTestDatabase } from './support/db.ts';
import { type FakeRequest, type FakeStep, startFakeLlm } from './support/fake-llm.ts';
import { ROLE_MODELS, startTestSteward, writeTestConfig } from './support/steward.ts';

/*
 * Turns under concurrency and crashes (issue 9, items 2–4): several messages at once to one
 * conversation, an instance that dies mid-turn, a crash inside a skill call.
 */

type Wire = NonNullable<FakeRequest['body']['messages']>;

/** The user's words in each user message of a request, in order (without the context part). */
const userTexts = (messages: Wire) =>
  messages
    .filter((message) => message.role === 'user')
    .map((message) =>
      typeof message.content === 'string' ? message.content : messageText([message.content.at(-1)!]),
    );

/** Problems with tool-call adjacency: every call answered right after its assistant message. */
function adjacencyProblems(messages: Wire): string[] {
  const problems: string[] = [];
  messages.forEach((message, index) => {
    if (message.role !== 'assistant' || !message.tool_calls?.length) return;
    const ids = message.tool_calls.map((call) => call.id);
    const following = messages.slice(index + 1, index + 1 + ids.length);
    const answered = following.filter((next) => next.role === 'tool').map((next) => next.tool_call_id);
    if (answered.join() !== ids.join()) problems.push(`calls ${ids.join()} answered by ${answered.join()}`);
  });
  const called = new Set(
    messages.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []) : [])).map((c) => c.id),
  );
  for (const message of messages) {
    if (message.role === 'tool' && !called.has(message.tool_call_id))
      problems.push(`orphan result ${message.tool_call_id}`);
  }
  return problems;
}

for (const backend of backends()) {
  describe(`same-conversation concurrency [${backend}]`, () => {
    it('gives six concurrent messages clean, ordered, adjacency-correct histories, each answered once', async () => {
      const fake = await startFakeLlm({ latencyMs: 5 });
      const steward = await startTestSteward(backend, fake);
      try {
        // Odd messages look something up first (a tool call and its result inside the turn).
        fake.respondWith((request): FakeStep => {
          const messages = request.body.messages ?? [];
          const own = userTexts(messages).at(-1) ?? '';
          const number = Number(/msg (\d+)/.exec(own)?.[1] ?? 0);
          const last = messages.at(-1)!;
          if (number % 2 === 1 && last.role === 'user') {
            return { toolCalls: [{ name: 'get_skill', arguments: { path: 'tasks' } }] };
          }
          return { text: `answer ${number}` };
        });
        const first = await steward.runtime.engine.handle({ userId: 'local', text: 'msg 0', channel: 'cli' });
        const outcomes = await Promise.all(
          [1, 2, 3, 4, 5, 6].map((number) =>
            steward.runtime.engine.handle({
              userId: 'local',
              text: `msg ${number}`,
              channel: 'cli',
              conversationId: first.conversationId,
            }),
          ),
        );
        outcomes.forEach((outcome, index) => {
          expect(outcome.status).toBe('completed');
          expect(outcome.reply).toBe(`answer ${index + 1}`);
        });
        // The conversation as stored: each message once, each followed by its own answer.
        const stored = await steward.db.database.query<{ role: string; content: string }>(
          "SELECT role, content FROM messages WHERE conversation_id = $1 AND role IN ('user', 'assistant') AND content <> '' ORDER BY id",
          [first.conversationId],
        );
        const order = stored.filter((m) => m.role === 'user').map((m) => m.content);
        expect([...order].sort()).toEqual(['msg 0', 'msg 1', 'msg 2', 'msg 3', 'msg 4', 'msg 5', 'msg 6']);
        for (let index = 0; index < stored.length; index += 2) {
          expect(stored[index + 1]!.content).toBe(stored[index]!.content.replace('msg', 'answer'));
        }
        // What the model was shown: completed turns in order, then its own message; never a queued one.
        for (const request of fake.chatRequests) {
          const messages = request.body.messages!;
          const users = userTexts(messages);
          const own = users.at(-1)!;
          expect(users).toEqual(order.slice(0, order.indexOf(own) + 1));
          expect(adjacencyProblems(messages)).toEqual([]);
        }
        expect(fake.chatRequests).toHaveLength(7 + 3);
        fake.assertDone();
      } finally {
        await steward.close();
        await fake.close();
      }
    });

    it('runs a turn a dead instance left queued, and re-runs one it left running before any skill ran', async () => {
      const fake = await startFakeLlm();
      const steward = await startTestSteward(backend, fake);
      const db = steward.db.database;
      try {
        await db.query(
          "INSERT INTO conversations (id, user_id, channel) VALUES ('c-orphans', 'local', 'cli')",
        );
        // A turn the dead instance had started: its user message and a read it had begun.
        await db.query(
          "INSERT INTO turns (id, conversation_id, user_id, status, mode, request, owner) VALUES ('t-running', 'c-orphans', 'local', 'running', 'multi_agent', 'first question', 'dead-instance')",
        );
        const [message] = await db.query<{ id: number }>(
          "INSERT INTO messages (conversation_id, user_id, turn_id, role, content) VALUES ('c-orphans', 'local', 't-running', 'user', 'first question') RETURNING id",
        );
        await db.query("UPDATE turns SET user_message_id = $1 WHERE id = 't-running'", [message!.id]);
        await db.query(
          `INSERT INTO messages (conversation_id, user_id, turn_id, role, content, tool_calls) VALUES ('c-orphans', 'local', 't-running', 'assistant', '', $1)`,
          [JSON.stringify([{ id: 'call-lost', name: 'get_skill', arguments: {}, rawArguments: '{}' }])],
        );
        await db.query(
          "INSERT INTO turns (id, conversation_id, user_id, status, mode, request, owner) VALUES ('t-queued', 'c-orphans', 'local', 'queued', 'multi_agent', 'second question', 'dead-instance')",
        );
        fake.respondWith((request) => {
          const own = userTexts(request.body.messages!).at(-1)!;
          return { text: `answer to ${own}` };
        });
        const outcome = await steward.runtime.engine.handle({
          userId: 'local',
          text: 'third question',
          channel: 'cli',
          conversationId: 'c-orphans',
        });
        expect(outcome.reply).toBe('answer to third question');
        const asked = fake.chatRequests.map((request) => userTexts(request.body.messages!).at(-1));
        expect(asked).toEqual(['first question', 'second question', 'third question']);
        for (const request of fake.chatRequests)
          expect(adjacencyProblems(request.body.messages!)).toEqual([]);
        const turns = await db.query<{ id: string; status: string; reply: string }>(
          "SELECT id, status, reply FROM turns WHERE conversation_id = 'c-orphans' ORDER BY seq",
        );
        expect(turns.map((turn) => [turn.id, turn.status, turn.reply])).toEqual([
          ['t-running', 'completed', 'answer to first question'],
          ['t-queued', 'completed', 'answer to second question'],
          [outcome.turnId, 'completed', 'answer to third question'],
        ]);
        expect(await steward.runtime.engine.recoverInterrupted()).toBe(0);
      } finally {
        await steward.close();
        await fake.close();
      }
    });

    it('reports a skill call running at the crash as "may have happened", and continue does not repeat it', async () => {
      const fake = await startFakeLlm();
      const steward = await startTestSteward(backend, fake);
      const db = steward.db.database;
      try {
        await db.query(
          "INSERT INTO conversations (id, user_id, channel) VALUES ('c-uncertain', 'local', 'cli')",
        );
        await db.query(
          "INSERT INTO turns (id, conversation_id, user_id, status, mode, request, owner) VALUES ('t-mid', 'c-uncertain', 'local', 'running', 'multi_agent', 'Create the Q1 report task', 'dead-instance')",
        );
        await db.query(
          "INSERT INTO skill_executions (id, turn_id, user_id, conversation_id, kind, agent_id, status) VALUES ('agent-row', 't-mid', 'local', 'c-uncertain', 'agent', 'writer', 'running')",
        );
        await db.query(
          `INSERT INTO skill_executions (id, parent_id, turn_id, user_id, conversation_id, kind, skill, command, status)
           VALUES ('call-row', 'agent-row', 't-mid', 'local', 'c-uncertain', 'skill', 'tasks.create', 'tasks.create --title "Q1 report"', 'running')`,
        );
        expect(await steward.runtime.engine.recoverInterrupted()).toBe(1);
        const rows = await db.query<{ id: string; status: string }>(
          "SELECT id, status FROM skill_executions WHERE turn_id = 't-mid' ORDER BY id",
        );
        expect(rows).toEqual([
          { id: 'agent-row', status: 'interrupted' },
          { id: 'call-row', status: 'unknown' },
        ]);
        const [note] = await db.query<{ content: string }>(
          "SELECT content FROM messages WHERE conversation_id = 'c-uncertain' AND role = 'assistant'",
        );
        expect(note!.content).toContain('May have happened — check before repeating');
        expect(note!.content).toContain('tasks.create --title "Q1 report"');

        fake.respondWith(() => ({ text: 'I checked: the task exists.' }));
        await steward.runtime.engine.handle({
          userId: 'local',
          text: 'continue',
          channel: 'cli',
          conversationId: 'c-uncertain',
        });
        const shown = JSON.stringify(fake.chatRequests.at(-1)!.body.messages);
        expect(shown).toContain('may or may not have happened');
        expect(shown).toContain('Check (search/get) before doing any of them again');
      } finally {
        await steward.close();
        await fake.close();
      }
    });
  });
}

describe('malformed tool-call arguments', () => {
  let fake: Awaited<ReturnType<typeof startFakeLlm>>;
  let steward: Awaited<ReturnType<typeof startTestSteward>>;
  beforeAll(async () => {
    fake = await startFakeLlm();
    steward = await startTestSteward(backends()[0]!, fake);
  });
  afterAll(async () => {
    await steward?.close();
    await fake?.close();
  });

  it('repairs what jsonrepair can, says so, and returns the rest to the model instead of failing the turn', async () => {
    fake.enqueue(
      { toolCalls: [{ name: 'run', arguments: '{"command": "tasks.search --query report"' }] },
      { toolCalls: [{ name: 'get_skill', arguments: 'path = tasks, please' }] },
      { text: 'No open report tasks.' },
    );
    const outcome = await steward.runtime.engine.handle({
      userId: 'local',
      text: 'Any report tasks?',
      channel: 'cli',
    });
    expect(outcome.status).toBe('completed');
    expect(outcome.reply).toBe('No open report tasks.');
    const [, second, third] = fake.chatRequests.map((request) => request.body.messages!);
    const repaired = second!.at(-1)!;
    expect(repaired.role).toBe('tool');
    expect(messageText(repaired.content)).toContain('were not valid JSON; they were repaired');
    expect(messageText(repaired.content)).toContain('No tasks match');
    // The history sent back carries valid JSON for the repaired call.
    const call = second!.find((m) => m.role === 'assistant')!;
    expect(() =>
      JSON.parse(
        (call as { tool_calls: { function: { arguments: string } }[] }).tool_calls[0]!.function.arguments,
      ),
    ).not.toThrow();
    const refused = third!.at(-1)!;
    expect(messageText(refused.content)).toMatch(
      /not valid JSON and could not be repaired|must be a JSON object/,
    );
    fake.assertDone();
  });
});

describe.runIf(backends().includes('postgres'))('a killed instance [postgres]', () => {
  it('has its mid-turn work recovered once, in order, by a surviving instance', async () => {
    const fake = await startFakeLlm();
    const test = await createTestDatabase('postgres');
    const { dir, env } = writeTestConfig(fake.url);
    const config = loadConfig({ env, cwd: dir });
    const survivorDb = await openPostgres(test.url!);
    const doomedDb = await openPostgres(test.url!, { applicationName: 'steward-doomed' });
    const doomed = await createRuntime(config, { database: doomedDb, logger: silentLogger() });
    const survivor = await createRuntime(config, { database: survivorDb, logger: silentLogger() });
    try {
      let agentAsked!: () => void;
      const agentStarted = new Promise<void>((resolve) => {
        agentAsked = resolve;
      });
      fake.respondWith((request): FakeStep => {
        const messages = request.body.messages!;
        if (request.body.model === ROLE_MODELS.sub_agent) {
          agentAsked();
          return { hang: true };
        }
        const own = userTexts(messages).at(-1)!;
        if (own === 'Plan the offsite') {
          if (messages.at(-1)!.role === 'user')
            return { toolCalls: [{ name: 'run', arguments: { command: 'tasks.search --query offsite' } }] };
          return {
            toolCalls: [
              {
                name: 'dispatch_agent',
                arguments: { agent_id: 'planner', mission: 'Plan it', skills: ['tasks.search'] },
              },
              { name: 'get_agent_results', arguments: {} },
            ],
          };
        }
        return { text: `answer to ${own}` };
      });
      const first = await doomed.engine.handle({ userId: 'local', text: 'hello', channel: 'cli' });
      const doomedTurn = doomed.engine.handle({
        userId: 'local',
        text: 'Plan the offsite',
        channel: 'cli',
        conversationId: first.conversationId,
      });
      doomedTurn.catch(() => undefined);
      await agentStarted;
      // The instance dies: its connections (and so its locks) are gone; its turn stays running.
      await test.database.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE 'steward-doomed%'",
      );

      const outcome = await survivor.engine.handle({
        userId: 'local',
        text: 'Where are we?',
        channel: 'cli',
        conversationId: first.conversationId,
      });
      expect(outcome.reply).toBe('answer to Where are we?');
      const shown = fake.chatRequests.at(-1)!.body.messages!;
      expect(adjacencyProblems(shown)).toEqual([]);
      const texts = shown.map((message) => messageText(message.content));
      const noteAt = texts.findIndex((text) => text.includes('I was interrupted'));
      expect(noteAt).toBeGreaterThan(0);
      expect(noteAt).toBeLessThan(texts.findLastIndex((text) => text.endsWith('Where are we?')));
      expect(texts[noteAt]).toContain('tasks.search --query offsite');

      const turns = await survivorDb.query<{ request: string; status: string }>(
        'SELECT request, status FROM turns WHERE conversation_id = $1 ORDER BY seq',
        [first.conversationId],
      );
      expect(turns).toEqual([
        { request: 'hello', status: 'completed' },
        { request: 'Plan the offsite', status: 'interrupted' },
        { request: 'Where are we?', status: 'completed' },
      ]);
      const agents = await survivorDb.query<{ status: string }>(
        "SELECT status FROM skill_executions WHERE kind = 'agent'",
      );
      expect(agents).toEqual([{ status: 'interrupted' }]);
      expect(await survivor.engine.recoverInterrupted()).toBe(0);
      const notes = await survivorDb.query("SELECT 1 FROM messages WHERE content LIKE 'I was interrupted%'");
      expect(notes).toHaveLength(1);
    } finally {
      await survivor.close();
      await survivorDb.close();
      // The dead instance's process would be gone; here its objects are just dropped.
      void doomed.close().catch(() => undefined);
      await fake.close();
      await test.drop().catch(() => undefined);
    }
  });
});
