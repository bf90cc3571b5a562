import { createHmac } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FailureLimiter } from '../src/channels/failure-limiter.ts';
import { createLogger } from '../src/logging/logger.ts';
import { ensureUser, linkIdentity, setPrimaryChannel } from '../src/users/index.ts';
import { fixture, telegramText } from './support/channel-fixtures.ts';
import { type ChannelSteward, startChannelSteward } from './support/channels.ts';
import { backends } from './support/db.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { FAKE_BOT_TOKEN, type FakeTelegram, startFakeTelegram } from './support/fake-telegram.ts';

const SECRET = 'edge-test-webhook-secret';
const VERIFY_TOKEN = 'edge-verify-token-4711';
const APP_SECRET = 'edge-app-secret';

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
  whatsapp: { access_token: "edge-access-token", app_secret: "${APP_SECRET}", verify_token: "${VERIFY_TOKEN}", phone_number_id: "1234" }
`,
        {
          limiter: new FailureLimiter(), // the production limits
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

    it('never refuses a correctly signed webhook because of forged ones from the same address', async () => {
      // In-process requests all come from one address, as every platform does behind a reverse proxy.
      const forged = [];
      for (let index = 0; index < 25; index++) {
        const response = await steward.post(
          '/webhooks/telegram',
          telegramText({ updateId: 2, messageId: 2, fromId: 999 }),
          { 'x-telegram-bot-api-secret-token': `wrong-${index}` },
        );
        forged.push(response);
      }
      // 20 failures in a minute: further unverifiable requests are refused outright for a while.
      expect(forged.map((response) => response.status)).toEqual([
        ...Array<number>(20).fill(401),
        ...Array<number>(5).fill(429),
      ]);
      expect(Number(forged.at(-1)!.headers.get('retry-after'))).toBeGreaterThan(0);
      const badSignature = await steward.post('/webhooks/whatsapp', fixture('whatsapp', 'status-delivered'), {
        'x-hub-signature-256': `sha256=${'0'.repeat(64)}`,
      });
      expect(badSignature.status).toBe(429);

      // A correctly signed update from the same address is answered and processed.
      const sent = telegram.sent.length;
      const signed = await steward.post(
        '/webhooks/telegram',
        telegramText({ updateId: 3, messageId: 3, fromId: 998 }),
        { 'x-telegram-bot-api-secret-token': SECRET },
      );
      expect(signed.status).toBe(200);
      expect(
        await steward.count("SELECT count(*) FROM inbound_messages WHERE channel_message_id = '998:3'"),
      ).toBe(1);
      await expect.poll(() => telegram.sent.length, { timeout: 10_000 }).toBe(sent + 1);
      // So is a body-signed one (WhatsApp): its signature is checked before any refusal.
      const body = JSON.stringify(fixture('whatsapp', 'status-delivered'));
      const whatsapp = await steward.post('/webhooks/whatsapp', body, {
        'x-hub-signature-256': `sha256=${createHmac('sha256', APP_SECRET).update(body).digest('hex')}`,
      });
      expect(whatsapp.status).toBe(200);
      // Metrics hear of every verification; the block is logged once.
      expect(verifications.filter((entry) => entry === 'telegram:rejected')).toHaveLength(25);
      expect(verifications.slice(-2)).toEqual(['telegram:verified', 'whatsapp:verified']);
      expect(logs.match(/address blocked/g)).toHaveLength(1);
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
