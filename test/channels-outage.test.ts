import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryCursors } from '../src/channels/cursor-store.ts';
import { DiscordAdapter } from '../src/channels/discord/discord-adapter.ts';
import { EmailAdapter } from '../src/channels/email/email-adapter.ts';
import { GoogleChatAdapter } from '../src/channels/googlechat/googlechat-adapter.ts';
import { outboxRows } from '../src/channels/index.ts';
import { MatrixAdapter } from '../src/channels/matrix/matrix-adapter.ts';
import { queueOutbound } from '../src/channels/outbox.ts';
import { OutboxSender } from '../src/channels/outbox-sender.ts';
import { SignalAdapter } from '../src/channels/signal/signal-adapter.ts';
import { SlackAdapter } from '../src/channels/slack/slack-adapter.ts';
import { TelegramAdapter } from '../src/channels/telegram/telegram-adapter.ts';
import type { ChannelAdapter, ChannelName } from '../src/channels/types.ts';
import { WhatsAppAdapter } from '../src/channels/whatsapp/whatsapp-adapter.ts';
import { IMAP_SCHEMES, parseMailUrl, SMTP_SCHEMES } from '../src/integrations/index.ts';
import { silentLogger } from '../src/logging/logger.ts';
import { telegramText } from './support/channel-fixtures.ts';
import { type ChannelSteward, startChannelSteward } from './support/channels.ts';
import { backends, describeEachBackend } from './support/db.ts';
import { FAKE_DISCORD_TOKEN, type FakeDiscord, startFakeDiscord } from './support/fake-discord.ts';
import { FAKE_PROJECT_NUMBER, type FakeGoogleChat, startFakeGoogleChat } from './support/fake-google-chat.ts';
import {
  FAKE_PHONE_NUMBER_ID,
  FAKE_WHATSAPP_TOKEN,
  type FakeGraph,
  startFakeGraph,
} from './support/fake-graph.ts';
import { gatewayErrorPage } from './support/fake-http.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import {
  FAKE_MATRIX_BOT,
  FAKE_MATRIX_TOKEN,
  type FakeMatrix,
  startFakeMatrix,
} from './support/fake-matrix.ts';
import { FAKE_SIGNAL_NUMBER, type FakeSignal, startFakeSignal } from './support/fake-signal.ts';
import { FAKE_SLACK_TOKEN, type FakeSlack, startFakeSlack } from './support/fake-slack.ts';
import { startFakeSmtp } from './support/fake-smtp.ts';
import { FAKE_BOT_TOKEN, type FakeTelegram, startFakeTelegram } from './support/fake-telegram.ts';

/*
 * A platform's outage as a gateway in front of it shows it: 502/503/504 with an HTML page.
 * That is an HTTP answer, not an unknown outcome: the message is retried with backoff and
 * arrives exactly once. Only a send whose outcome is really unknown stays ambiguous.
 */

let telegram: FakeTelegram;
let slack: FakeSlack;
let graph: FakeGraph;
let chat: FakeGoogleChat;
let discord: FakeDiscord;
let matrix: FakeMatrix;
let signal: FakeSignal;
let smtp: Awaited<ReturnType<typeof startFakeSmtp>>;
let serviceAccount: string;
beforeAll(async () => {
  [telegram, slack, graph, chat, discord, matrix, signal, smtp] = await Promise.all([
    startFakeTelegram(),
    startFakeSlack(),
    startFakeGraph(),
    startFakeGoogleChat(),
    startFakeDiscord(),
    startFakeMatrix(),
    startFakeSignal(),
    startFakeSmtp({ user: 'steward@example.com', password: 'smtp-pass-1234' }),
  ]);
  serviceAccount = await chat.writeServiceAccount(
    path.join(mkdtempSync(path.join(os.tmpdir(), 'steward-outage-')), 'sa.json'),
  );
});
afterAll(async () => {
  await Promise.all([
    telegram?.close(),
    slack?.close(),
    graph?.close(),
    chat?.close(),
    discord?.close(),
    matrix?.close(),
    signal?.close(),
    smtp?.close(),
  ]);
});

const OUTAGE = [gatewayErrorPage(502), gatewayErrorPage(503), gatewayErrorPage(504)];

/** Chat ids are unique across backends: both runs talk to the same fakes. */
let nextChat = 7000;

describeEachBackend('sending through a platform outage', (db) => {
  const adapters: Record<ChannelName, () => ChannelAdapter> = {
    telegram: () =>
      new TelegramAdapter({ botToken: FAKE_BOT_TOKEN, apiRoot: telegram.url, logger: silentLogger() }),
    slack: () =>
      new SlackAdapter({
        botToken: FAKE_SLACK_TOKEN,
        signingSecret: 'unused',
        apiUrl: slack.apiUrl,
        logger: silentLogger(),
      }),
    whatsapp: () =>
      new WhatsAppAdapter({
        accessToken: FAKE_WHATSAPP_TOKEN,
        appSecret: 'unused',
        verifyToken: 'unused',
        phoneNumberId: FAKE_PHONE_NUMBER_ID,
        graphUrl: graph.graphUrl,
        logger: silentLogger(),
      }),
    googlechat: () =>
      new GoogleChatAdapter({
        projectNumber: FAKE_PROJECT_NUMBER,
        jwksUrl: chat.jwksUrl,
        apiUrl: chat.url,
        serviceAccountPath: serviceAccount,
        logger: silentLogger(),
      }),
    discord: () =>
      new DiscordAdapter({
        botToken: FAKE_DISCORD_TOKEN,
        apiUrl: discord.apiUrl,
        cursors: memoryCursors(),
        logger: silentLogger(),
        requestTimeoutMs: 300,
      }),
    matrix: () =>
      new MatrixAdapter({
        homeserverUrl: matrix.url,
        accessToken: FAKE_MATRIX_TOKEN,
        userId: FAKE_MATRIX_BOT,
        cursors: memoryCursors(),
        admitted: async () => true,
        logger: silentLogger(),
      }),
    signal: () =>
      new SignalAdapter({ cliUrl: signal.url, number: FAKE_SIGNAL_NUMBER, logger: silentLogger() }),
    email: () =>
      new EmailAdapter({
        imap: parseMailUrl('imap://unused:unused@127.0.0.1:9', IMAP_SCHEMES)!,
        smtp: parseMailUrl(smtp.url, SMTP_SCHEMES)!,
        from: 'Steward <steward@example.com>',
        address: 'steward@example.com',
        cursors: memoryCursors(),
        logger: silentLogger(),
      }),
  };

  /** Queues one message and returns a sender on a clock the test moves. */
  const outage = async (
    channel: ChannelName,
    text: string,
    chatId = String(nextChat++),
    sendTimeoutMs?: number,
  ) => {
    const [id] = await queueOutbound(db(), [
      { dedupeKey: `outage:${chatId}`, channel, chatId, meta: {}, userId: null, inboundId: null, text },
    ]);
    const adapter = adapters[channel]();
    let clock = new Date(Date.now() + 60_000);
    const sender = new OutboxSender({
      database: db(),
      adapter: () => adapter,
      logger: silentLogger(),
      now: () => clock,
      ...(sendTimeoutMs ? { sendTimeoutMs } : {}),
    });
    const row = async () => (await outboxRows(db(), { chatId })).find((found) => found.id === id)!;
    return {
      chatId,
      row,
      clock: () => clock,
      /** One pass of the sender, then the clock past any backoff. */
      pass: async () => {
        await sender.flush();
        const settled = await row();
        clock = new Date(Math.max(clock.getTime(), settled.nextAttemptAt.getTime()) + 1);
        return settled;
      },
    };
  };

  it('Telegram: three HTML 502 answers are retried and the reply arrives exactly once', async () => {
    telegram.failNext('sendMessage', gatewayErrorPage(502), gatewayErrorPage(502), gatewayErrorPage(502));
    const run = await outage('telegram', 'Your digest is ready.');
    const first = await run.pass();
    expect(first).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastError: expect.stringContaining('502'),
    });
    expect(first.lastError).toContain('502 Bad Gateway');
    expect(first.lastError).not.toContain(FAKE_BOT_TOKEN);
    expect(await run.pass()).toMatchObject({ status: 'pending', attempts: 2 });
    expect(await run.pass()).toMatchObject({ status: 'pending', attempts: 3 });
    expect(await run.pass()).toMatchObject({ status: 'sent', attempts: 4, lastError: null });
    await run.pass();
    const delivered = telegram.sent.filter((message) => message.chat_id === run.chatId);
    expect(delivered.map((message) => message.text)).toEqual(['Your digest is ready.']);
    expect(telegram.calls('sendMessage').filter((call) => call.body?.chat_id === run.chatId)).toHaveLength(4);
  });

  it('Telegram: honours Retry-After on a 503 page, and retries a 5xx whose JSON is not the Bot API', async () => {
    telegram.failNext('sendMessage', gatewayErrorPage(503, { 'retry-after': '120' }), {
      status: 503,
      json: { message: 'Service Unavailable' },
    });
    const run = await outage('telegram', 'After the outage.');
    const before = run.clock().getTime();
    const first = await run.pass();
    expect(first.status).toBe('pending');
    expect(first.nextAttemptAt.getTime()).toBe(before + 120_000);
    expect(await run.pass()).toMatchObject({ status: 'pending', lastError: expect.stringContaining('503') });
    expect((await run.pass()).status).toBe('sent');
    expect(telegram.sent.filter((message) => message.chat_id === run.chatId)).toHaveLength(1);
  });

  it('Telegram: an HTML page with 200, which says nothing of the message, stays ambiguous', async () => {
    telegram.failNext('sendMessage', { status: 200, html: '<html><body>Welcome</body></html>' });
    const run = await outage('telegram', 'Maybe.');
    expect(await run.pass()).toMatchObject({ status: 'ambiguous', attempts: 1 });
    await run.pass();
    expect(telegram.calls('sendMessage').filter((call) => call.body?.chat_id === run.chatId)).toHaveLength(1);
  });

  it('Slack: HTML 502/503/504 answers are retried and the message is posted once', async () => {
    slack.failNext('chat.postMessage', ...OUTAGE);
    const run = await outage('slack', 'Slack after the outage.', `D${nextChat++}`);
    for (let attempt = 1; attempt <= 3; attempt++) {
      expect(await run.pass()).toMatchObject({ status: 'pending', attempts: attempt });
    }
    expect(await run.pass()).toMatchObject({ status: 'sent', attempts: 4 });
    expect(slack.posts.filter((post) => post.channel === run.chatId)).toHaveLength(1);
  });

  it("Slack: a 200 answer that is not Slack's JSON stays ambiguous instead of failing as a refusal", async () => {
    slack.failNext('chat.postMessage', { status: 200, html: '<html><body>Maintenance</body></html>' });
    const run = await outage('slack', 'Maybe posted.', `D${nextChat++}`);
    expect(await run.pass()).toMatchObject({ status: 'ambiguous', attempts: 1 });
    await run.pass();
    expect(slack.calls('chat.postMessage').filter((call) => call.body?.channel === run.chatId)).toHaveLength(
      1,
    );
  });

  it('WhatsApp: HTML 502/503/504 answers are retried and the message is sent once', async () => {
    graph.failNext(...OUTAGE);
    const run = await outage('whatsapp', 'WhatsApp after the outage.', `1650555${nextChat++}`);
    for (let attempt = 1; attempt <= 3; attempt++) {
      expect(await run.pass()).toMatchObject({ status: 'pending', attempts: attempt });
    }
    expect(await run.pass()).toMatchObject({ status: 'sent', attempts: 4 });
    expect(graph.sent.filter((sent) => sent.to === run.chatId)).toHaveLength(1);
  });

  it('Google Chat: an outage of the Chat API or of the token endpoint is retried, posted once', async () => {
    chat.failNext(gatewayErrorPage(502));
    const run = await outage('googlechat', 'Chat after the outage.', `spaces/OUTAGE${nextChat++}`);
    expect(await run.pass()).toMatchObject({ status: 'pending', attempts: 1 });
    expect(await run.pass()).toMatchObject({ status: 'sent', attempts: 2 });
    expect(chat.posts.filter((post) => post.space === run.chatId)).toHaveLength(1);

    // A fresh adapter has no cached token: the token endpoint's outage is met first.
    chat.failToken(gatewayErrorPage(503), gatewayErrorPage(504));
    const tokenRun = await outage('googlechat', 'After the token outage.', `spaces/TOKEN${nextChat++}`);
    expect(await tokenRun.pass()).toMatchObject({ status: 'pending', attempts: 1 });
    expect(await tokenRun.pass()).toMatchObject({ status: 'pending', attempts: 2 });
    expect(await tokenRun.pass()).toMatchObject({ status: 'sent', attempts: 3 });
    expect(chat.posts.filter((post) => post.space === tokenRun.chatId)).toHaveLength(1);
  });

  it('Email: 4xx answers (greylisting, a busy server) are retried and the mail is sent once; a 5xx fails', async () => {
    smtp.failNext(
      { code: 451, message: '4.7.1 Greylisted, try again later' },
      { code: 421, message: '4.3.2 Service shutting down' },
      { code: 452, message: '4.3.1 Insufficient system storage' },
    );
    const run = await outage('email', 'Email after the outage.', `ana${nextChat++}@example.org`);
    for (let attempt = 1; attempt <= 3; attempt++) {
      expect(await run.pass()).toMatchObject({ status: 'pending', attempts: attempt });
    }
    expect(await run.pass()).toMatchObject({ status: 'sent', attempts: 4 });
    expect(smtp.received.filter((mail) => mail.to.includes(run.chatId))).toHaveLength(1);

    smtp.failNext({ code: 550, message: '5.1.1 No such user here' });
    const refused = await outage('email', 'Nobody home.', `nobody${nextChat++}@example.org`);
    expect(await refused.pass()).toMatchObject({
      status: 'failed',
      lastError: expect.stringContaining('550'),
    });
  });

  it('Signal: HTML 502/503/504 answers are retried and the message is sent once', async () => {
    signal.failNext('send', ...OUTAGE);
    const run = await outage('signal', 'Signal after the outage.', `+1555077${nextChat++}`);
    for (let attempt = 1; attempt <= 3; attempt++) {
      expect(await run.pass()).toMatchObject({ status: 'pending', attempts: attempt });
    }
    expect(await run.pass()).toMatchObject({ status: 'sent', attempts: 4 });
    expect(signal.sent.filter((sent) => sent.recipients.includes(run.chatId))).toHaveLength(1);
  });

  it('Discord: HTML 502/503/504 answers are retried and the message is posted once', async () => {
    discord.failNext('messages', ...OUTAGE);
    const run = await outage('discord', 'Discord after the outage.', `66${nextChat++}`);
    for (let attempt = 1; attempt <= 3; attempt++) {
      expect(await run.pass()).toMatchObject({ status: 'pending', attempts: attempt });
    }
    expect(await run.pass()).toMatchObject({ status: 'sent', attempts: 4 });
    expect(discord.posts.filter((post) => post.channel_id === run.chatId)).toHaveLength(1);
  });

  it("Discord: a 429 waits for Discord's reset; a refusal fails; a send that times out stays ambiguous", async () => {
    discord.failNext('messages', {
      status: 429,
      headers: { 'retry-after': '7', 'x-ratelimit-scope': 'user' },
      json: { message: 'You are being rate limited.', retry_after: 7, global: false },
    });
    const limited = await outage('discord', 'Rate limited.', `66${nextChat++}`);
    const before = limited.clock().getTime();
    const first = await limited.pass();
    expect(first).toMatchObject({ status: 'pending', lastError: expect.stringContaining('rate limited') });
    expect(first.nextAttemptAt.getTime()).toBeGreaterThanOrEqual(before + 7_000);
    expect(await limited.pass()).toMatchObject({ status: 'sent', attempts: 2 });

    discord.failNext('messages', { status: 403, json: { message: 'Missing Access', code: 50001 } });
    const refused = await outage('discord', 'Refused.', `66${nextChat++}`);
    expect(await refused.pass()).toMatchObject({
      status: 'failed',
      lastError: expect.stringContaining('50001'),
    });

    discord.failNext('messages', { hang: true });
    const slow = await outage('discord', 'Maybe posted.', `66${nextChat++}`);
    expect(await slow.pass()).toMatchObject({ status: 'ambiguous', attempts: 1 });
    expect(discord.calls('messages').filter((call) => call.path.includes(slow.chatId))).toHaveLength(1);
  });

  it('Matrix: an outage and a send that times out are retried with the same transaction id; one event', async () => {
    const room = `!outage${nextChat++}:fake.example`;
    matrix.createRoom({ id: room, members: ['@alice:fake.example'] });
    matrix.failNext('send', gatewayErrorPage(502), { hang: true });
    const run = await outage('matrix', 'Matrix after the outage.', room, 300);
    expect(await run.pass()).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastError: expect.stringContaining('502'),
    });
    expect(await run.pass()).toMatchObject({ status: 'pending', attempts: 2 });
    expect(await run.pass()).toMatchObject({ status: 'sent', attempts: 3 });
    const calls = matrix.calls('send').filter((call) => call.path.includes(encodeURIComponent(room)));
    expect(calls).toHaveLength(3);
    expect(new Set(calls.map((call) => call.path)).size).toBe(1);
    expect(matrix.sent.filter((sent) => sent.roomId === room)).toHaveLength(1);
  });

  it('Google Chat: a token request that times out is retried (asking for a token posts nothing)', async () => {
    chat.failToken({ hang: true });
    const run = await outage('googlechat', 'After a slow token.', `spaces/SLOW${nextChat++}`, 300);
    expect(await run.pass()).toMatchObject({ status: 'pending', attempts: 1 });
    expect(await run.pass()).toMatchObject({ status: 'sent', attempts: 2 });
  });

  it('Google Chat: a token endpoint that refuses the key fails the message with the reason', async () => {
    chat.failToken({ status: 400, json: { error: 'invalid_grant' } });
    const run = await outage('googlechat', 'Never posted.', `spaces/REFUSED${nextChat++}`);
    expect(await run.pass()).toMatchObject({
      status: 'failed',
      lastError: expect.stringContaining('invalid_grant'),
    });
  });
});

for (const [index, backend] of backends().entries()) {
  describe(`a reply through a Telegram outage, end to end [${backend}]`, () => {
    const SECRET = 'tg-outage-secret_0123';
    // Both backends talk to the same fake: a chat of their own.
    const OWNER = 3131 + index;
    let llm: FakeLlm;
    let steward: ChannelSteward;
    beforeAll(async () => {
      llm = await startFakeLlm();
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
      await llm?.close();
    });

    it('the Bot API answers the reply three times with an HTML 502; the reply arrives once', async () => {
      const chatId = String(OWNER);
      llm.enqueue({ text: 'Here is your answer.' });
      telegram.failNext('sendMessage', gatewayErrorPage(502), gatewayErrorPage(502), gatewayErrorPage(502));
      const update = telegramText({
        updateId: 31_001,
        messageId: 31_001 + index,
        fromId: OWNER,
        text: 'Hello?',
      });
      const response = await steward.post('/webhooks/telegram', update, {
        'x-telegram-bot-api-secret-token': SECRET,
      });
      expect(response.status).toBe(200);
      const sent = () => telegram.sent.filter((message) => message.chat_id === chatId);
      // Backoff of about 1, 2 and 4 s between the attempts.
      await expect.poll(() => sent().length, { timeout: 60_000, interval: 200 }).toBe(1);
      expect(sent()[0]!.text).toBe('Here is your answer.');
      const calls = () => telegram.calls('sendMessage').filter((call) => call.body?.chat_id === chatId);
      expect(calls()).toHaveLength(4);
      const [row] = await steward.runtime.channels.sender
        .flush()
        .then(() =>
          steward.runtime.database.query<{ status: string; attempts: number }>(
            "SELECT status, attempts FROM outbox_messages WHERE channel = 'telegram' AND chat_id = $1",
            [chatId],
          ),
        );
      expect(row).toEqual({ status: 'sent', attempts: 4 });
      expect(sent()).toHaveLength(1);
      llm.assertDone();
    });
  });
}
