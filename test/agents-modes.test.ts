import { afterAll, beforeAll, expect, it } from 'vitest';
import { backends } from './support/db.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { ROLE_MODELS, startTestSteward, type TestSteward } from './support/steward.ts';

let fake: FakeLlm;
let steward: TestSteward;
beforeAll(async () => {
  fake = await startFakeLlm();
  steward = await startTestSteward(backends()[0]!, fake, {
    extraYaml: 'channels: { modes: { voice: single_loop } }\n',
  });
});
afterAll(async () => {
  await steward?.close();
  await fake?.close();
});

const toolNames = () => (fake.chatRequests.at(-1)!.body.tools ?? []).map((tool) => tool.function.name).sort();

it('picks the mode per channel and lets a conversation override it, for good', async () => {
  fake.respondWith(() => ({ text: 'ok' }));
  try {
    await steward.runtime.engine.handle({ userId: 'local', text: 'hi', channel: 'cli' });
    expect(toolNames()).toEqual(['dispatch_agent', 'get_agent_results', 'get_skill', 'message_agent', 'run']);
    await steward.runtime.engine.handle({ userId: 'local', text: 'hi', channel: 'voice' });
    expect(toolNames()).toEqual(['get_skill', 'run', 'use_skill']);

    const first = await steward.runtime.engine.handle({
      userId: 'local',
      text: 'hi',
      channel: 'cli',
      mode: 'direct',
    });
    expect(toolNames()).toContain('tasks__create');
    await steward.runtime.engine.handle({
      userId: 'local',
      text: 'again',
      channel: 'cli',
      conversationId: first.conversationId,
    });
    expect(toolNames()).toContain('tasks__create');
  } finally {
    fake.respondWith(null);
  }
});

it('in single_loop the orchestrator runs a mutating skill itself, through the sentinel', async () => {
  let step = 0;
  fake.respondWith((request) => {
    if (request.body.model === ROLE_MODELS.sentinel)
      return { text: '{"reasoning": "asked for", "decision": true}' };
    step++;
    return step === 1
      ? {
          toolCalls: [
            {
              name: 'use_skill',
              arguments: { skill: 'tasks.create', arguments: { title: 'Call the dentist' } },
            },
          ],
        }
      : { text: 'Added it.' };
  });
  try {
    const outcome = await steward.runtime.engine.handle({
      userId: 'local',
      text: 'Remind me to call the dentist',
      channel: 'voice',
    });
    expect(outcome.reply).toBe('Added it.');
    const rows = await steward.db.database.query<{ title: string }>(
      "SELECT title FROM tasks WHERE title = 'Call the dentist'",
    );
    expect(rows).toHaveLength(1);
    expect(fake.requests.some((request) => request.body.model === ROLE_MODELS.sentinel)).toBe(true);
  } finally {
    fake.respondWith(null);
  }
});

it('stores a redelivered channel message once and runs no second turn', async () => {
  let calls = 0;
  fake.respondWith(() => {
    calls++;
    return { text: 'Got it.' };
  });
  try {
    const input = {
      userId: 'local',
      text: 'hello from telegram',
      channel: 'telegram',
      channelMessageId: '9001',
    };
    const first = await steward.runtime.engine.handle(input);
    const again = await steward.runtime.engine.handle(input);
    expect(first.duplicate).toBe(false);
    expect(again).toMatchObject({ duplicate: true, turnId: first.turnId, reply: 'Got it.' });
    expect(calls).toBe(1);
    const stored = await steward.db.database.query(
      "SELECT id FROM messages WHERE channel = 'telegram' AND channel_message_id = '9001'",
    );
    expect(stored).toHaveLength(1);
  } finally {
    fake.respondWith(null);
  }
});
