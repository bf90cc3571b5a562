import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite } from '../src/db/index.ts';
import { freePort, startServer } from './support/cli.ts';
import { backends } from './support/db.ts';
import { type FakeLlm, type FakeRequest, startFakeLlm } from './support/fake-llm.ts';
import { ROLE_MODELS, startTestSteward, writeTestConfig } from './support/steward.ts';

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake.close();
});

const requestText = (request: FakeRequest) => JSON.stringify(request.body.messages ?? []);

const compactionAnswer = JSON.stringify({
  summary: 'The user prefers aisle seats on flights.',
  topic_changed: true,
  memory: {
    content: 'Prefers aisle seats on flights',
    tags: ['travel', 'flights'],
    category: 'preference',
    importance: 0.8,
    entities: [{ name: 'TAP Air Portugal', kind: 'organization' }],
  },
});

for (const backend of backends()) {
  describe(`memory end to end [${backend}]`, () => {
    it('remembers a stated preference and brings it into a new conversation', async () => {
      const steward = await startTestSteward(backend, fake, { memory: true });
      fake.respondWith((request) => {
        if (request.body.model === ROLE_MODELS.compaction) return { text: compactionAnswer };
        return { text: 'Noted.' };
      });
      try {
        const first = await steward.runtime.engine.handle({
          userId: 'local',
          text: 'I always prefer aisle seats when I fly, I mostly fly TAP Air Portugal',
          channel: 'cli',
        });
        expect(first.status).toBe('completed');
        expect(await steward.runtime.jobs.drain()).toBeGreaterThanOrEqual(1);
        const memories = await steward.db.database.query<{
          content: string;
          category: string;
          source_type: string;
        }>("SELECT content, category, source_type FROM memory_entries WHERE user_id = 'local'");
        expect(memories).toEqual([
          { content: 'Prefers aisle seats on flights', category: 'preference', source_type: 'compaction' },
        ]);
        const [conversation] = await steward.db.database.query<{ summary: string; summary_version: number }>(
          'SELECT summary, summary_version FROM conversations WHERE id = $1',
          [first.conversationId],
        );
        // The short history fits its budget: nothing is folded into the summary (the prompt stays
        // append-only), while the memory was extracted from the turn all the same.
        expect(conversation).toEqual({ summary: '', summary_version: 0 });
        const entities = await steward.db.database.query<{ name: string }>('SELECT name FROM entities');
        expect(entities).toEqual([{ name: 'TAP Air Portugal' }]);

        fake.requests.length = 0;
        const second = await steward.runtime.engine.handle({
          userId: 'local',
          text: 'Which seat should I pick on my flights next week?',
          channel: 'cli',
          newConversation: true,
        });
        expect(second.conversationId).not.toBe(first.conversationId);
        const orchestrator = fake.requests.find((request) => request.body.model === ROLE_MODELS.orchestrator);
        expect(orchestrator).toBeDefined();
        expect(requestText(orchestrator!)).toContain('Prefers aisle seats on flights');

        fake.requests.length = 0;
        await steward.runtime.engine.handle({
          userId: 'someone-else',
          text: 'Which seat should I pick on my flights next week?',
          channel: 'cli',
        });
        const other = fake.requests.find((request) => request.body.model === ROLE_MODELS.orchestrator);
        expect(requestText(other!)).not.toContain('aisle');
      } finally {
        fake.respondWith(null);
        await steward.close();
      }
    });
  });
}

describe('compaction across a crash', () => {
  it('runs a compaction job queued before the process was killed after it restarts', async () => {
    const { env } = writeTestConfig(fake.url, 'memory: { compaction_delay_seconds: 4 }\n', { memory: true });
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'steward-crash-'));
    const serverEnv = { ...env, STEWARD_DATA_DIR: dataDir, PORT: String(await freePort()) };
    let compactions = 0;
    fake.respondWith((request) => {
      if (request.body.model === ROLE_MODELS.compaction) {
        compactions++;
        return {
          text: JSON.stringify({
            summary: 'The user asked about the crash test.',
            topic_changed: false,
            memory: null,
          }),
        };
      }
      return { text: 'Answered before the crash.' };
    });
    try {
      const first = await startServer({ env: serverEnv });
      const response = await fetch(`${first.url}/api/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'Tell me about the crash test', user: 'local' }),
      });
      const reply = (await response.json()) as { reply: string; conversationId: string };
      expect(reply.reply).toBe('Answered before the crash.');
      await first.stop('SIGKILL');
      expect(compactions).toBe(0);

      const second = await startServer({ env: { ...serverEnv, PORT: String(await freePort()) } });
      await expect.poll(() => compactions, { timeout: 20_000, interval: 200 }).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await second.stop('SIGTERM')).toBe(0);

      const database = await openPglite(dataDir);
      try {
        const rows = await database.query<{ looked_at: boolean }>(
          'SELECT memory_through_message_id > 0 AS looked_at FROM conversations WHERE id = $1',
          [reply.conversationId],
        );
        expect(rows).toEqual([{ looked_at: true }]);
      } finally {
        await database.close();
      }
    } finally {
      fake.respondWith(null);
    }
  }, 90_000);
});
