import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { telegramText } from './support/channel-fixtures.ts';
import { freePort, startServer } from './support/cli.ts';
import { backends, createTestDatabase, type TestDatabase } from './support/db.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { FAKE_BOT_TOKEN, type FakeTelegram, startFakeTelegram } from './support/fake-telegram.ts';

const SECRET = 'crash-test-secret';

for (const backend of backends()) {
  describe(`kill -9 between the ack and the reply [${backend}]`, { timeout: 240_000 }, () => {
    let llm: FakeLlm;
    let telegram: FakeTelegram;
    let db: TestDatabase | null = null;
    beforeAll(async () => {
      llm = await startFakeLlm();
      telegram = await startFakeTelegram();
      if (backend === 'postgres') db = await createTestDatabase('postgres', { migrate: false });
    });
    afterAll(async () => {
      await db?.drop();
      await telegram?.close();
      await llm?.close();
    });

    it('sends the reply exactly once after a restart', async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'steward-crash-'));
      const port = await freePort();
      writeFileSync(
        path.join(dir, 'steward.yaml'),
        `llm:
  base_url: "${llm.url}"
  api_key: "test-key-0123456789"
  max_retries: 0
  timeout_ms: 60000
  roles:
    orchestrator: { model: "test/orchestrator" }
    sub_agent: { model: "test/agent" }
    sentinel: { model: "test/sentinel" }
channels:
  public_url: "http://127.0.0.1:${port}"
  allow: ["telegram:1111"]
  telegram: { bot_token: "${FAKE_BOT_TOKEN}", webhook_secret: "${SECRET}", api_root: "${telegram.url}" }
`,
      );
      const env: Record<string, string> = {
        STEWARD_CONFIG: path.join(dir, 'steward.yaml'),
        STEWARD_DATA_DIR: path.join(dir, 'data'),
        PORT: String(port),
        LOG_LEVEL: 'warn',
        ...(db?.url ? { DATABASE_URL: db.url } : {}),
      };
      // The first model call never answers: the process dies while the turn waits on it.
      llm.enqueue({ hang: true });
      let server = await startServer({ env });
      try {
        const ack = await fetch(`${server.url}/webhooks/telegram`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': SECRET },
          body: JSON.stringify(telegramText({ updateId: 1, messageId: 41, text: 'Plan my week' })),
        });
        expect(ack.status).toBe(200);
        await expect.poll(() => llm.chatRequests.length, { timeout: 20_000 }).toBe(1);
        expect(await server.stop('SIGKILL')).toBeNull();
        expect(telegram.sent).toHaveLength(0);

        llm.respondWith(() => ({ text: 'Here is your week.' }));
        server = await startServer({ env });
        await expect.poll(() => telegram.sent.length, { timeout: 30_000 }).toBe(1);
        expect(telegram.sent[0]!.text).toBe('Here is your week.');
        // Redelivery after the restart (Telegram retries unacknowledged updates) changes nothing.
        await fetch(`${server.url}/webhooks/telegram`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': SECRET },
          body: JSON.stringify(telegramText({ updateId: 1, messageId: 41, text: 'Plan my week' })),
        });
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        expect(telegram.sent).toHaveLength(1);
      } finally {
        llm.respondWith(null);
        await server.stop('SIGTERM');
      }
    });
  });
}
