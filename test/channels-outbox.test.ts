import { type AddressInfo, createServer } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { outboxBacklog, outboxRows } from '../src/channels/index.ts';
import { queueOutbound } from '../src/channels/outbox.ts';
import { OutboxSender } from '../src/channels/outbox-sender.ts';
import { TelegramAdapter } from '../src/channels/telegram/telegram-adapter.ts';
import { silentLogger } from '../src/logging/logger.ts';
import { StewardMetrics } from '../src/observability/steward-metrics.ts';
import { describeEachBackend } from './support/db.ts';
import { FAKE_BOT_TOKEN, type FakeTelegram, startFakeTelegram } from './support/fake-telegram.ts';

let telegram: FakeTelegram;
beforeAll(async () => {
  telegram = await startFakeTelegram();
});
afterAll(async () => {
  await telegram?.close();
});

/** A port nothing listens on: connecting is refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Chat ids are unique across backends: both runs talk to the same fake. */
let chat = 100;

describeEachBackend('outbox', (db) => {
  const adapter = () =>
    new TelegramAdapter({ botToken: FAKE_BOT_TOKEN, apiRoot: telegram.url, logger: silentLogger() });
  const sender = (options: { sendTimeoutMs?: number } = {}) =>
    new OutboxSender({ database: db(), adapter: () => adapter(), logger: silentLogger(), ...options });
  const queue = (texts: string[]) => {
    const chatId = String(chat++);
    return queueOutbound(
      db(),
      texts.map((text, index) => ({
        dedupeKey: `test:${chatId}:${index}`,
        channel: 'telegram',
        chatId,
        meta: {},
        userId: null,
        inboundId: null,
        text,
      })),
    ).then((ids) => ({ chatId, ids }));
  };
  const rows = (chatId: string) => outboxRows(db(), { chatId });

  it('honours a 429 retry_after and keeps the chat in order behind it', async () => {
    telegram.failNext('sendMessage', {
      status: 429,
      json: {
        ok: false,
        error_code: 429,
        description: 'Too Many Requests: retry after 7',
        parameters: { retry_after: 7 },
      },
    });
    const { chatId } = await queue(['first', 'second']);
    let clock = new Date(Date.now() + 60_000); // ahead of the rows' creation time
    const outbox = new OutboxSender({
      database: db(),
      adapter: () => adapter(),
      logger: silentLogger(),
      now: () => clock,
    });
    await outbox.flush();
    const waiting = await rows(chatId);
    expect(waiting.map((row) => row.status)).toEqual(['pending', 'pending']);
    expect(waiting[0]!.nextAttemptAt.getTime()).toBe(clock.getTime() + 7_000);
    expect(telegram.sent.filter((message) => message.chat_id === chatId)).toHaveLength(0);
    clock = new Date(clock.getTime() + 6_000);
    await outbox.flush();
    expect((await rows(chatId)).map((row) => row.status)).toEqual(['pending', 'pending']);
    clock = new Date(clock.getTime() + 1_001);
    await outbox.flush();
    const settled = await rows(chatId);
    expect(settled.map((row) => row.status)).toEqual(['sent', 'sent']);
    expect(settled.every((row) => row.platformMessageId !== null)).toBe(true);
    const delivered = telegram.sent.filter((message) => message.chat_id === chatId);
    expect(delivered.map((message) => message.text)).toEqual(['first', 'second']);
  });

  it('reports what waits to be sent as steward_outbox_backlog', async () => {
    const metrics = new StewardMetrics({ outboxBacklog: () => outboxBacklog(db()) });
    const backlog = async () =>
      Number(/^steward_outbox_backlog (\d+)$/m.exec((await metrics.render()).body)?.[1]);
    await sender().flush();
    const before = await backlog();
    await queue(['one', 'two', 'three']);
    expect(await backlog()).toBe(before + 3);
    await sender().flush();
    expect(await backlog()).toBe(before);
  });

  it('resends as plain text when Telegram cannot parse the HTML', async () => {
    telegram.failNext('sendMessage', {
      status: 400,
      json: {
        ok: false,
        error_code: 400,
        description: "Bad Request: can't parse entities: Unsupported start tag",
      },
    });
    const { chatId } = await queue(['**bold** and [a link](https://example.com)']);
    await sender().flush();
    const [row] = await rows(chatId);
    expect(row!.status).toBe('sent');
    const delivered = telegram.sent.filter((message) => message.chat_id === chatId);
    expect(delivered).toEqual([expect.objectContaining({ text: 'bold and a link (https://example.com)' })]);
    expect(delivered[0]!.parse_mode).toBeUndefined();
  });

  it('marks a send whose outcome is unknown ambiguous and never resends it', async () => {
    telegram.failNext('sendMessage', { hang: true });
    const { chatId } = await queue(['maybe delivered', 'next one']);
    const outbox = sender({ sendTimeoutMs: 300 });
    await outbox.flush();
    await outbox.flush();
    const [first, second] = await rows(chatId);
    expect(first).toMatchObject({ status: 'ambiguous', attempts: 1 });
    expect(second!.status).toBe('sent');
    expect(telegram.calls('sendMessage').filter((call) => call.body?.chat_id === chatId)).toHaveLength(2);
  });

  it('marks a send a crash interrupted ambiguous, and a refused one failed', async () => {
    const { chatId, ids } = await queue(['in flight at the crash']);
    await db().query("UPDATE outbox_messages SET status = 'sending', attempts = 1 WHERE id = $1", [ids[0]]);
    telegram.failNext('sendMessage', {
      status: 403,
      json: { ok: false, error_code: 403, description: 'Forbidden: bot was blocked by the user' },
    });
    const blocked = await queue(['to a user who blocked the bot']);
    await sender().flush();
    expect((await rows(chatId))[0]!.status).toBe('ambiguous');
    expect(telegram.sent.some((message) => message.chat_id === chatId)).toBe(false);
    expect((await rows(blocked.chatId))[0]).toMatchObject({
      status: 'failed',
      lastError: expect.stringContaining('blocked'),
    });
  });

  it('retries when the platform is unreachable, and stores each part once', async () => {
    const unreachable = new TelegramAdapter({
      botToken: FAKE_BOT_TOKEN,
      apiRoot: `http://127.0.0.1:${await closedPort()}`,
      logger: silentLogger(),
    });
    const { chatId, ids } = await queue(['while the API is down']);
    const again = await queueOutbound(db(), [
      {
        dedupeKey: `test:${chatId}:0`,
        channel: 'telegram',
        chatId,
        meta: {},
        userId: null,
        inboundId: null,
        text: 'dup',
      },
    ]);
    expect(again).toEqual([]);
    await new OutboxSender({ database: db(), adapter: () => unreachable, logger: silentLogger() }).flush();
    const [row] = await rows(chatId);
    expect(row).toMatchObject({ id: ids[0], status: 'pending', attempts: 1 });
    expect(row!.nextAttemptAt.getTime()).toBeGreaterThan(Date.now());
  });
});
