import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FailureLimiter } from '../src/channels/failure-limiter.ts';
import { createLogger } from '../src/logging/logger.ts';
import { ensureUser, linkIdentity, setPrimaryChannel } from '../src/users/index.ts';
import { telegramText } from './support/channel-fixtures.ts';
import { type ChannelSteward, startChannelSteward } from './support/channels.ts';
import { backends } from './support/db.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { FAKE_BOT_TOKEN, type FakeTelegram, startFakeTelegram } from './support/fake-telegram.ts';

const SECRET = 'edge-test-webhook-secret';
const VERIFY_TOKEN = 'edge-verify-token-4711';

for (const backend of backends()) {
  describe(`webhook edge and deliveries [${backend}]`, () => {
    let llm: FakeLlm;
    let telegram: FakeTelegram;
    let steward: ChannelSteward;
    let logs = '';
    const verifications: string[] = [];
    beforeAll(async () => {
      llm = await startFakeLlm();
      telegram = await startFakeTelegram();
      const destination = new Writable({
        write(chunk, _encoding, done) {
          logs += String(chunk);
          done();
        },
      });
      steward = await startChannelSteward(
        backend,
        llm,
        `channels:
  public_url: "http://127.0.0.1:9"
  telegram: { bot_token: "${FAKE_BOT_TOKEN}", webhook_secret: "${SECRET}", api_root: "${telegram.url}" }
  whatsapp: { access_token: "edge-access-token", app_secret: "edge-app-secret", verify_token: "${VERIFY_TOKEN}", phone_number_id: "1234" }
`,
        {
          limiter: new FailureLimiter({ maxFailures: 3, blockMs: 60_000 }),
          onVerification: (channel, result) => verifications.push(`${channel}:${result}`),
          logger: createLogger({
            level: 'info',
            destination,
            secrets: () => steward.runtime.config.get().secrets,
          }),
        },
      );
    });
    afterAll(async () => {
      await steward?.close();
      await telegram?.close();
      await llm?.close();
    });

    it('logs each webhook by path only: no query string, no token, no secret', async () => {
      const handshake = await steward.app.request(
        `/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=42`,
      );
      expect(await handshake.text()).toBe('42');
      const hook = await steward.post('/webhooks/telegram', telegramText({ updateId: 1, fromId: 999 }), {
        'x-telegram-bot-api-secret-token': SECRET,
      });
      expect(hook.status).toBe(200);
      await expect.poll(() => telegram.sent.length, { timeout: 10_000 }).toBe(1);
      expect(logs).toContain('"path":"/webhooks/whatsapp"');
      expect(logs).toContain('"path":"/webhooks/telegram"');
      for (const secret of [VERIFY_TOKEN, 'hub.verify_token', SECRET, FAKE_BOT_TOKEN, 'edge-app-secret']) {
        expect(logs).not.toContain(secret);
      }
    });

    it('refuses an address after repeated verification failures, even with the right secret', async () => {
      const attempt = (secret: string) =>
        steward.post('/webhooks/telegram', telegramText({ updateId: 2, messageId: 2, fromId: 999 }), {
          'x-telegram-bot-api-secret-token': secret,
        });
      const statuses = [];
      for (let index = 0; index < 3; index++) statuses.push((await attempt(`wrong-${index}`)).status);
      statuses.push((await attempt(SECRET)).status);
      expect(statuses).toEqual([401, 401, 401, 429]);
      // Metrics and the failure-rate alert hear of every verification (the blocked one never got that far).
      expect(verifications.slice(-3)).toEqual([
        'telegram:rejected',
        'telegram:rejected',
        'telegram:rejected',
      ]);
      expect(verifications).toContain('whatsapp:verified');
      expect(logs).toContain('address blocked');
      llm.assertDone();
    });

    it('delivers to the channel a user last wrote from, else into their latest conversation', async () => {
      const { channels, database } = steward.runtime;
      await ensureUser(database, 'dora');
      await linkIdentity(database, { channel: 'telegram', externalId: '5151', userId: 'dora' });
      const sent = telegram.sent.length;
      const toChannel = await channels.deliver('dora', 'Reminder: **water the plants**.');
      expect(toChannel).toMatchObject({ delivered: 'channel', channel: 'telegram', chatId: '5151' });
      await expect.poll(() => telegram.sent.length, { timeout: 10_000 }).toBe(sent + 1);
      expect(telegram.sent.at(-1)).toMatchObject({
        chat_id: '5151',
        text: 'Reminder: <b>water the plants</b>.',
      });

      // A primary channel that is off here (Slack) is skipped for the next one.
      await linkIdentity(database, { channel: 'slack', externalId: 'U0DORA', userId: 'dora' });
      await setPrimaryChannel(database, 'dora', 'slack');
      const fallback = await channels.deliver('dora', 'Still reaches you.');
      expect(fallback).toMatchObject({ delivered: 'channel', channel: 'telegram', chatId: '5151' });
      await expect.poll(() => telegram.sent.length, { timeout: 10_000 }).toBe(sent + 2);

      const stored = await channels.deliver('no-channel-user', 'Your weekly report is ready.');
      expect(stored.delivered).toBe('conversation');
      const rows = await database.query<{ content: string; role: string }>(
        'SELECT role, content FROM messages WHERE conversation_id = $1',
        [(stored as { conversationId: string }).conversationId],
      );
      expect(rows).toEqual([{ role: 'assistant', content: 'Your weekly report is ready.' }]);
      expect(telegram.sent.length).toBe(sent + 2);
    });
  });
}
