import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InboundRateLimiter } from '../src/security/index.ts';
import { type AuthEnv, chatRoutes, createServerApp } from '../src/server/index.ts';
import { messageText } from './support/agent-scripts.ts';
import { telegramText } from './support/channel-fixtures.ts';
import { type ChannelSteward, startChannelSteward } from './support/channels.ts';
import { backends } from './support/db.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { FAKE_BOT_TOKEN, type FakeTelegram, startFakeTelegram } from './support/fake-telegram.ts';

/*
 * Issue 17, item 7: per-user and per-channel limits on inbound messages. Over a limit the
 * message is refused with 429, Retry-After and what to do, before anything is stored; a
 * message already stored (a redelivery) is always taken and answered.
 */

const SECRET = 'rate-limit-secret_0123';
const FIRST = 2001;
const SECOND = 2002;

/** Counters are per minute: start a test early in a minute so it never straddles two. */
async function startOfAMinute(): Promise<void> {
  const second = new Date().getSeconds();
  if (second > 40) await new Promise((resolve) => setTimeout(resolve, (61 - second) * 1000));
}

for (const backend of backends()) {
  describe(`inbound rate limits [${backend}]`, { timeout: 180_000 }, () => {
    let llm: FakeLlm;
    let telegram: FakeTelegram;
    let steward: ChannelSteward;
    const hook = (update: object) =>
      steward.post('/webhooks/telegram', update, { 'x-telegram-bot-api-secret-token': SECRET });
    const update = (id: number, from: number) =>
      telegramText({ updateId: id, messageId: id, fromId: from, text: `message ${id}` });

    beforeAll(async () => {
      llm = await startFakeLlm();
      telegram = await startFakeTelegram();
      llm.respondWith((request) => {
        const last = request.body.messages!.filter((message) => message.role === 'user').at(-1)!;
        const text = typeof last.content === 'string' ? last.content : messageText([last.content.at(-1)!]);
        return { text: `reply to ${text}` };
      });
      steward = await startChannelSteward(
        backend,
        llm,
        `limits: { inbound_per_user_per_minute: 3, inbound_per_channel_per_minute: 5 }
channels:
  public_url: "http://127.0.0.1:9/"
  allow: ["telegram:${FIRST}", "telegram:${SECOND}"]
  telegram: { bot_token: "${FAKE_BOT_TOKEN}", webhook_secret: "${SECRET}", api_root: "${telegram.url}" }
`,
      );
    }, 120_000);
    afterAll(async () => {
      await steward?.close();
      await telegram?.close();
      await llm?.close();
    });

    it('refuses a sender over its limit and a channel over its limit with 429, and answers every stored message', async () => {
      await startOfAMinute();
      for (const id of [1, 2, 3]) expect((await hook(update(id, FIRST))).status).toBe(200);
      const refused = await hook(update(4, FIRST));
      expect(refused.status).toBe(429);
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      const body = (await refused.json()) as { error: string; message: string };
      expect(body.error).toBe('rate_limited');
      expect(body.message).toContain(`Too many messages from user telegram:${FIRST}: at most 3 a minute`);
      expect(body.message).toContain('Nothing was stored; send it again in');
      // A redelivery of a message already stored is taken, limit or not.
      expect((await hook(update(1, FIRST))).status).toBe(200);

      // The channel as a whole: 5 a minute, whoever sends.
      for (const id of [5, 6]) expect((await hook(update(id, SECOND))).status).toBe(200);
      const channelRefused = await hook(update(7, SECOND));
      expect(channelRefused.status).toBe(429);
      expect(((await channelRefused.json()) as { message: string }).message).toContain(
        'Too many messages from the telegram channel: at most 5 a minute',
      );

      // Every stored message is answered once; the refused ones were never stored.
      await expect.poll(() => telegram.sent.length, { timeout: 30_000 }).toBe(5);
      expect(telegram.sent.map((message) => message.text).sort()).toEqual(
        [1, 2, 3, 5, 6].map((id) => `reply to message ${id}`).sort(),
      );
      expect(await steward.count('SELECT count(*) AS count FROM inbound_messages')).toBe(5);
    });

    it('refuses a user over the limit on POST /api/chat before the message is stored', async () => {
      await startOfAMinute();
      const { database, engine } = steward.runtime;
      const api = new Hono<AuthEnv>();
      const limiter = new InboundRateLimiter(database, () => ({
        inbound_per_user_per_minute: 2,
        inbound_per_channel_per_minute: 0,
      }));
      api.route('/', chatRoutes({ engine, database, rateLimit: limiter }));
      const app = createServerApp({
        database,
        logger: steward.runtime.logger,
        config: () => steward.runtime.config.get(),
        api,
      });
      const chat = (text: string) =>
        app.request('/api/chat', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ user: 'limited-user', text }),
        });
      expect((await chat('one')).status).toBe(200);
      expect((await chat('two')).status).toBe(200);
      const refused = await chat('three');
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(((await refused.json()) as { message: string }).message).toContain(
        'Too many messages from user limited-user: at most 2 a minute (limits.inbound_per_user_per_minute)',
      );
      const turns = await database.query<{ request: string }>(
        "SELECT request FROM turns WHERE user_id = 'limited-user' ORDER BY seq",
      );
      expect(turns.map((turn) => turn.request)).toEqual(['one', 'two']);
    });
  });
}
