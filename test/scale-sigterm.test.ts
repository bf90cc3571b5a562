import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messageText } from './support/agent-scripts.ts';
import { telegramText } from './support/channel-fixtures.ts';
import { answeringPostgres, type Cluster, startCluster } from './support/cluster.ts';
import { type FakeLlm, type FakeRequest, startFakeLlm } from './support/fake-llm.ts';
import { type FakeTelegram, startFakeTelegram } from './support/fake-telegram.ts';

/*
 * Issue 17: SIGTERM during a turn loses nothing. A turn that finishes inside the grace is
 * answered (its Telegram reply leaves before the process exits); one that does not is
 * interrupted and answered as such; webhooks get 503 while draining and are taken after the
 * restart; every message ends with exactly one reply.
 */

const server = await answeringPostgres();

function ownText(request: FakeRequest): string {
  const last = (request.body.messages ?? []).filter((message) => message.role === 'user').at(-1);
  if (!last) return '';
  return typeof last.content === 'string' ? last.content : messageText([last.content.at(-1)!]);
}

const QUICK_CHAT = 7_100_001;
const SLOW_CHAT = 7_100_002;

describe.skipIf(!server)('SIGTERM during a turn', { timeout: 300_000 }, () => {
  let fake: FakeLlm;
  let telegram: FakeTelegram;
  let cluster: Cluster;
  beforeAll(async () => {
    fake = await startFakeLlm();
    telegram = await startFakeTelegram();
    cluster = await startCluster({
      count: 1,
      fake,
      telegram: { url: telegram.url, allow: [`telegram:${QUICK_CHAT}`, `telegram:${SLOW_CHAT}`] },
      env: { STEWARD_SHUTDOWN_GRACE_SECONDS: '3' },
    });
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
    await telegram?.close();
    await fake?.close();
  });

  it('finishes or interrupts running turns, refuses webhooks with 503, flushes the outbox, loses nothing', async () => {
    // Quick turns finish inside the 3 s grace; slow ones never get an answer from the model.
    fake.respondWith((request) =>
      ownText(request).startsWith('slow')
        ? { hang: true }
        : { text: `reply to ${ownText(request)}`, latencyMs: 1_500 },
    );
    const update = (id: number, chat: number, text: string) =>
      telegramText({ updateId: id, messageId: id, fromId: chat, text });
    expect((await cluster.telegram(0, update(1, QUICK_CHAT, 'quick from telegram'))).status).toBe(200);
    expect((await cluster.telegram(0, update(2, SLOW_CHAT, 'slow from telegram'))).status).toBe(200);
    const slowApi = cluster.chat(0, { user: 'api-user', text: 'slow from the API' });
    await expect.poll(() => fake.chatRequests.length, { timeout: 30_000 }).toBe(3);

    const instance = cluster.instances[0]!;
    const exited = instance.stop('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Draining: a webhook is refused with 503 (the platform redelivers it), an API call too.
    const refused = await cluster.telegram(0, update(3, QUICK_CHAT, 'late from telegram'));
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect((await cluster.chat(0, { user: 'api-user', text: 'too late' })).status).toBe(503);

    // The API caller of the slow turn is answered: interrupted, not dropped.
    const answer = await slowApi;
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as { status: string; reply: string };
    expect(body.status).toBe('interrupted');
    expect(await exited).toBe(0);

    // The quick turn's reply left before the process exited: the outbox was flushed.
    const sentTo = (chat: number) => telegram.sent.filter((message) => message.chat_id === String(chat));
    expect(sentTo(QUICK_CHAT).map((message) => message.text)).toEqual(['reply to quick from telegram']);
    const db = cluster.db.database;
    const turns = await db.query<{ request: string; status: string }>(
      'SELECT request, status FROM turns ORDER BY seq',
    );
    expect(turns).toEqual(
      expect.arrayContaining([
        { request: 'quick from telegram', status: 'completed' },
        { request: 'slow from telegram', status: 'interrupted' },
        { request: 'slow from the API', status: 'interrupted' },
      ]),
    );
    expect(turns).toHaveLength(3);

    // The next start: the refused update is redelivered and answered; the interrupted Telegram
    // turn has been reported to its chat exactly once; nothing is left open.
    fake.respondWith((request) => ({ text: `reply to ${ownText(request)}` }));
    await cluster.restart(0);
    expect((await cluster.telegram(0, update(3, QUICK_CHAT, 'late from telegram'))).status).toBe(200);
    await expect
      .poll(() => sentTo(QUICK_CHAT).map((message) => message.text), { timeout: 30_000 })
      .toEqual(['reply to quick from telegram', 'reply to late from telegram']);
    await expect.poll(() => sentTo(SLOW_CHAT).length, { timeout: 30_000 }).toBe(1);
    expect(sentTo(SLOW_CHAT)[0]!.text).toMatch(/interrupted/i);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(telegram.sent).toHaveLength(3);
    const open = await db.query(
      "SELECT id FROM turns WHERE status IN ('queued', 'running') UNION ALL SELECT id::text FROM inbound_messages WHERE status NOT IN ('done', 'failed', 'pairing')",
    );
    expect(open).toEqual([]);
  });
});
