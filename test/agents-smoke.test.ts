import { afterAll, beforeAll, expect, it } from 'vitest';
import { backends } from './support/db.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { ROLE_MODELS, startTestSteward, type TestSteward } from './support/steward.ts';

let fake: FakeLlm;
let steward: TestSteward;
beforeAll(async () => {
  fake = await startFakeLlm();
  steward = await startTestSteward(backends()[0]!, fake);
});
afterAll(async () => {
  await steward?.close();
  await fake?.close();
});

it('one agent creates a task through the sentinel', async () => {
  fake.respondWith((request) => {
    const model = request.body.model;
    const messages = request.body.messages ?? [];
    if (model === ROLE_MODELS.sentinel) return { text: '{"reasoning": "asked for", "decision": true}' };
    if (model === ROLE_MODELS.sub_agent) {
      const hasResult = messages.some((m: { role: string }) => m.role === 'tool');
      return hasResult
        ? { text: 'Created the task.' }
        : {
            toolCalls: [
              { name: 'run', arguments: { command: 'tasks.create --title "Buy milk" --priority high' } },
            ],
          };
    }
    const toolMessages = messages.filter((m: { role: string }) => m.role === 'tool').length;
    if (toolMessages === 0) {
      return {
        toolCalls: [
          {
            name: 'dispatch_agent',
            arguments: {
              agent_id: 'creator',
              mission: 'Create a task "Buy milk", high priority',
              skills: ['tasks.create'],
            },
          },
        ],
      };
    }
    if (toolMessages === 1) return { toolCalls: [{ name: 'get_agent_results', arguments: {} }] };
    return { text: 'Done: I added "Buy milk".' };
  });
  const outcome = await steward.runtime.engine.handle({
    userId: 'local',
    text: 'Add a task to buy milk, high priority',
    channel: 'cli',
  });
  expect(outcome.status).toBe('completed');
  expect(outcome.reply).toMatch(/^Done: I added "Buy milk"\.\n\n✓ tasks\.create — Buy milk \(t_[a-z0-9]+\)$/);
  const tasks = await steward.db.database.query<{ title: string }>('SELECT title FROM tasks');
  expect(tasks).toEqual([{ title: 'Buy milk' }]);
  expect(outcome.usage.promptTokens).toBeGreaterThan(0);
});
