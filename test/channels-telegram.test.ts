import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, telegramText, withField } from './support/channel-fixtures.ts';
import { type ChannelSteward, startChannelSteward } from './support/channels.ts';
import { backends } from './support/db.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { FAKE_BOT_TOKEN, type FakeTelegram, startFakeTelegram } from './support/fake-telegram.ts';

const SECRET = 'tg-webhook-secret_0123';
const OWNER = 1111;

for (const backend of backends()) {
  describe(`Telegram over its webhook [${backend}]`, () => {
    let llm: FakeLlm;
    let telegram: FakeTelegram;
    let steward: ChannelSteward;
    const hook = (update: object, secret: string | null = SECRET) =>
      steward.post('/webhooks/telegram', update, secret ? { 'x-telegram-bot-api-secret-token': secret } : {});

    beforeAll(async () => {
      llm = await startFakeLlm();
      telegram = await startFakeTelegram();
      steward = await startChannelSteward(
        backend,
        llm,
        `channels:
  public_url: "http://127.0.0.1:9/base/"
  allow: ["telegram:${OWNER}"]
  telegram: { bot_token: "${FAKE_BOT_TOKEN}", webhook_secret: "${SECRET}", api_root: "${telegram.url}" }
`,
      );
    });
    afterAll(async () => {
      await steward?.close();
      await telegram?.close();
      await llm?.close();
    });

    it('registers its webhook with the secret at start', () => {
      expect(telegram.webhooks).toEqual([
        { url: 'http://127.0.0.1:9/base/webhooks/telegram', secret_token: SECRET },
      ]);
    });

    it('acknowledges before the turn runs, then replies once, in HTML, with a typing indicator', async () => {
      llm.enqueue({ text: 'You have **two** tasks: <draft> & review.', latencyMs: 800 });
      const started = Date.now();
      const response = await hook(fixture('telegram', 'private-text'));
      expect(response.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(800);
      expect(telegram.sent).toHaveLength(0);
      await expect.poll(() => telegram.sent.length, { timeout: 10_000 }).toBe(1);
      expect(telegram.sent[0]).toMatchObject({
        chat_id: String(OWNER),
        parse_mode: 'HTML',
        text: 'You have <b>two</b> tasks: &lt;draft&gt; &amp; review.',
      });
      expect(telegram.chatActions).toContainEqual({ chat_id: String(OWNER), action: 'typing' });
      const request = JSON.stringify(llm.chatRequests.at(-1)!.body.messages);
      expect(request).toContain('What is on my list today?');
      llm.assertDone();
    });

    it('runs one turn and sends one reply for a webhook delivered five times', async () => {
      llm.enqueue({ text: 'Only once.', latencyMs: 300 });
      const update = telegramText({ updateId: 900, messageId: 2001, fromId: OWNER, text: 'Say it once' });
      const before = { requests: llm.chatRequests.length, sent: telegram.sent.length };
      const first = await Promise.all([hook(update), hook(update)]);
      for (let round = 0; round < 3; round++) first.push(await hook(update));
      expect(first.map((response) => response.status)).toEqual([200, 200, 200, 200, 200]);
      await expect.poll(() => telegram.sent.length, { timeout: 10_000 }).toBe(before.sent + 1);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(telegram.sent.length).toBe(before.sent + 1);
      expect(llm.chatRequests.length).toBe(before.requests + 1);
      expect(
        await steward.count("SELECT count(*) FROM inbound_messages WHERE channel_message_id = '1111:2001'"),
      ).toBe(1);
      llm.assertDone();
    });

    it('refuses a wrong or missing secret with 401, stores nothing and calls no model', async () => {
      const before = await steward.count('SELECT count(*) FROM inbound_messages');
      const update = telegramText({ updateId: 901, messageId: 2002, fromId: OWNER });
      const wrong = await hook(update, 'not-the-secret');
      const missing = await hook(update, null);
      expect([wrong.status, missing.status]).toEqual([401, 401]);
      expect(await wrong.text()).toBe('');
      expect(await steward.count('SELECT count(*) FROM inbound_messages')).toBe(before);
      expect(
        await steward.count("SELECT count(*) FROM webhook_rejections WHERE channel = 'telegram'"),
      ).toBeGreaterThan(0);
      llm.assertDone();
    });

    it('refuses oversized bodies and drops malformed ones, never with a 500', async () => {
      const huge = JSON.stringify({ update_id: 902, message: { text: 'x'.repeat(1_100_000) } });
      const oversized = await hook(JSON.parse(huge));
      expect(oversized.status).toBe(413);
      const malformed = await steward.post('/webhooks/telegram', '{"update_id": 9', {
        'x-telegram-bot-api-secret-token': SECRET,
      });
      expect(malformed.status).toBe(400);
      llm.assertDone();
    });

    it('acknowledges and drops a signed update it cannot use (wrong-typed fields), never a 503', async () => {
      const before = await steward.count('SELECT count(*) FROM inbound_messages');
      const update = telegramText({ updateId: 950, messageId: 3001, fromId: OWNER });
      const unusable = [
        withField(fixture('telegram', 'group-mention'), 'message.entities', 5),
        withField(update, 'message.text', 42),
        withField(update, 'message.from', 'ada'),
        withField(update, 'message.chat.id', { id: OWNER }),
        withField(fixture('telegram', 'voice-note'), 'message.voice.file_id', null),
        { hello: 'world' },
      ];
      for (const payload of unusable) expect((await hook(payload)).status).toBe(200);
      expect(await steward.count('SELECT count(*) FROM inbound_messages')).toBe(before);
      expect(
        await steward.count(
          "SELECT count FROM webhook_rejections WHERE channel = 'telegram' AND reason = 'dropped'",
        ),
      ).toBe(unusable.length);
      // The same update, well-typed, is taken.
      llm.enqueue({ text: 'Taken.' });
      const sent = telegram.sent.length;
      expect((await hook(update)).status).toBe(200);
      await expect.poll(() => telegram.sent.length, { timeout: 10_000 }).toBe(sent + 1);
      llm.assertDone();
    });

    it('answers commands without the model and ignores what it cannot read with a note', async () => {
      const sent = telegram.sent.length;
      expect((await hook(fixture('telegram', 'command-start'))).status).toBe(200);
      expect((await hook(fixture('telegram', 'sticker'))).status).toBe(200);
      await expect.poll(() => telegram.sent.length, { timeout: 10_000 }).toBe(sent + 2);
      expect(telegram.sent[sent]!.text).toContain('Steward');
      expect(telegram.sent[sent + 1]!.text).toContain('only read text');
      llm.assertDone();
    });

    it('in a group answers only when mentioned or replied to, replying to that message', async () => {
      llm.enqueue({ text: 'Two tasks.' }, { text: 'Nothing tomorrow.' });
      const sent = telegram.sent.length;
      await hook(fixture('telegram', 'group-chatter'));
      await hook(fixture('telegram', 'group-mention'));
      await hook(fixture('telegram', 'group-reply'));
      await expect.poll(() => telegram.sent.length, { timeout: 10_000 }).toBe(sent + 2);
      expect(
        telegram.sent.slice(sent).map((message) => [message.chat_id, message.reply_parameters?.message_id]),
      ).toEqual([
        ['-1001234567890', 88],
        ['-1001234567890', 90],
      ]);
      const mentioned = JSON.stringify(llm.chatRequests.at(-2)!.body.messages);
      expect(mentioned).toContain('what is on my list today?');
      expect(mentioned).not.toContain('@steward_test_bot');
      expect(JSON.stringify(llm.chatRequests.map((request) => request.body.messages))).not.toContain(
        'dinner at eight',
      );
      llm.assertDone();
    });

    it('gives a stranger a pairing code and no model call, then serves them once approved', async () => {
      const stranger = 4242;
      const sent = telegram.sent.length;
      await hook(
        telegramText({ updateId: 950, messageId: 1, fromId: stranger, text: 'hello, who are you?' }),
      );
      await expect.poll(() => telegram.sent.length, { timeout: 10_000 }).toBe(sent + 1);
      const pairing = telegram.sent.at(-1)!;
      expect(pairing.chat_id).toBe(String(stranger));
      const code = /\b([A-Z2-9]{8})\b/.exec(pairing.text)?.[1];
      expect(code).toBeDefined();
      expect(JSON.stringify(llm.chatRequests.map((request) => request.body.messages))).not.toContain(
        'who are you',
      );

      const approval = await steward.runtime.channels.approvePairing(code!.toLowerCase());
      expect(approval).toMatchObject({ ok: true, userId: `telegram:${stranger}` });
      await expect.poll(() => telegram.sent.length, { timeout: 10_000 }).toBe(sent + 2);
      expect(telegram.sent.at(-1)!.text).toContain('approved');
      expect(await steward.runtime.channels.approvePairing(code!)).toMatchObject({ ok: false });

      llm.enqueue({ text: 'Hello, new friend.' });
      await hook(telegramText({ updateId: 951, messageId: 2, fromId: stranger, text: 'now?' }));
      await expect.poll(() => telegram.sent.length, { timeout: 10_000 }).toBe(sent + 3);
      expect(telegram.sent.at(-1)!.text).toBe('Hello, new friend.');
      const [turn] = await steward.runtime.database.query<{ user_id: string }>(
        'SELECT user_id FROM turns ORDER BY started_at DESC LIMIT 1',
      );
      expect(turn!.user_id).toBe(`telegram:${stranger}`);
      llm.assertDone();
    });

    it('splits a long reply on paragraph boundaries, in order', async () => {
      const paragraphs = Array.from(
        { length: 6 },
        (_, index) => `Paragraph ${index}: ${'word '.repeat(300).trim()}`,
      );
      llm.enqueue({ text: paragraphs.join('\n\n') });
      const sent = telegram.sent.length;
      await hook(telegramText({ updateId: 960, messageId: 3000, fromId: OWNER, text: 'tell me everything' }));
      await expect.poll(() => telegram.sent.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(sent + 3);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const parts = telegram.sent.slice(sent);
      expect(parts.every((part) => part.text.length <= 4096)).toBe(true);
      expect(parts.map((part) => part.text).join('\n\n')).toBe(paragraphs.join('\n\n'));
      llm.assertDone();
    });
  });
}
