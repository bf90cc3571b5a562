import { afterAll, beforeAll, expect, it } from 'vitest';
import { backends } from './support/db.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { ROLE_MODELS, startTestSteward, type TestSteward } from './support/steward.ts';

let fake: FakeLlm;
let steward: TestSteward;
beforeAll(async () => {
  fake = await startFakeLlm();
  steward = await startTestSteward(backends().at(-1)!, fake);
});
afterAll(async () => {
  await steward?.close();
  await fake?.close();
});

it('marks a turn left running by a crash as interrupted, tells the user, and continues on request', async () => {
  const db = steward.db.database;
  await db.query("INSERT INTO conversations (id, user_id, channel) VALUES ('c-crash', 'local', 'cli')");
  const [message] = await db.query<{ id: number }>(
    "INSERT INTO messages (conversation_id, user_id, role, content) VALUES ('c-crash', 'local', 'user', 'File my expense report') RETURNING id",
  );
  await db.query(
    "INSERT INTO turns (id, conversation_id, user_id, status, mode, user_message_id, request, owner) VALUES ('t-crash', 'c-crash', 'local', 'running', 'multi_agent', $1, 'File my expense report', 'a-stopped-instance')",
    [message!.id],
  );
  await db.query("UPDATE messages SET turn_id = 't-crash' WHERE id = $1", [message!.id]);
  await db.query(
    "INSERT INTO skill_executions (id, turn_id, user_id, conversation_id, kind, skill, command, status) VALUES ('x1', 't-crash', 'local', 'c-crash', 'skill', 'tasks.search', 'tasks.search --query expense', 'ok')",
  );

  expect(await steward.runtime.engine.recoverInterrupted()).toBe(1);
  const [turn] = await db.query<{ status: string }>("SELECT status FROM turns WHERE id = 't-crash'");
  expect(turn!.status).toBe('interrupted');
  const notes = await db.query<{ content: string }>(
    "SELECT content FROM messages WHERE conversation_id = 'c-crash' AND role = 'assistant'",
  );
  expect(notes).toHaveLength(1);
  expect(notes[0]!.content).toContain('File my expense report');
  expect(notes[0]!.content).toContain('tasks.search --query expense');
  expect(notes[0]!.content).toContain('continue');
  expect(await steward.runtime.engine.recoverInterrupted()).toBe(0);

  fake.respondWith((request) => {
    expect(request.body.model).toBe(ROLE_MODELS.orchestrator);
    return { text: 'Picking up the expense report where I left off.' };
  });
  try {
    const outcome = await steward.runtime.engine.handle({
      userId: 'local',
      text: 'continue',
      channel: 'cli',
      conversationId: 'c-crash',
    });
    expect(outcome.status).toBe('completed');
    const request = JSON.stringify(fake.chatRequests.at(-1)!.body.messages);
    expect(request).toContain('continue the interrupted request');
    expect(request).toContain('File my expense report');
  } finally {
    fake.respondWith(null);
  }
});
