import { afterAll, beforeAll, expect, it } from 'vitest';
import { DeliveryRouter, type DeliveryTrouble } from '../src/channels/delivery-router.ts';
import {
  deliveryReceipts,
  inboxOf,
  markInboxRead,
  outboxRows,
  unreadInboxCount,
} from '../src/channels/index.ts';
import { OutboxSender } from '../src/channels/outbox-sender.ts';
import { SlackAdapter } from '../src/channels/slack/slack-adapter.ts';
import { TelegramAdapter } from '../src/channels/telegram/telegram-adapter.ts';
import type { ChannelAdapter, ChannelName } from '../src/channels/types.ts';
import { silentLogger } from '../src/logging/logger.ts';
import { ensureUser, linkIdentity, noteIdentityActivity, setPrimaryChannel } from '../src/users/index.ts';
import { describeEachBackend } from './support/db.ts';
import { gatewayErrorPage } from './support/fake-http.ts';
import { FAKE_SLACK_TOKEN, type FakeSlack, startFakeSlack } from './support/fake-slack.ts';
import { FAKE_BOT_TOKEN, type FakeTelegram, startFakeTelegram } from './support/fake-telegram.ts';

/*
 * deliver()'s receipts, settled from the outbox's outcome: a refusal moves the delivery to the
 * user's next channel, an unknown outcome stays ambiguous (a copy in the inbox, nothing resent),
 * and a delivery no channel took waits in the dashboard inbox.
 */

let telegram: FakeTelegram;
let slack: FakeSlack;
beforeAll(async () => {
  [telegram, slack] = await Promise.all([startFakeTelegram(), startFakeSlack()]);
});
afterAll(async () => {
  await Promise.all([telegram?.close(), slack?.close()]);
});

const BLOCKED = {
  status: 403,
  json: { ok: false, error_code: 403, description: 'Forbidden: bot was blocked by the user' },
};

/** User names and chat ids unique across backends: both runs talk to the same fakes. */
let nextUser = 1;

describeEachBackend('deliveries', (db) => {
  const adapters = new Map<ChannelName, ChannelAdapter>();
  const troubles: DeliveryTrouble[] = [];
  let clock = new Date(Date.now() + 60_000);
  const setup = (options: { sendTimeoutMs?: number; maxAttempts?: number } = {}) => {
    // The fakes start in beforeAll: the adapters are made once they have their URLs.
    adapters.set(
      'telegram',
      new TelegramAdapter({ botToken: FAKE_BOT_TOKEN, apiRoot: telegram.url, logger: silentLogger() }),
    );
    adapters.set(
      'slack',
      new SlackAdapter({
        botToken: FAKE_SLACK_TOKEN,
        signingSecret: 'unused',
        apiUrl: slack.apiUrl,
        logger: silentLogger(),
      }),
    );
    const router = new DeliveryRouter({
      database: db(),
      adapter: (name) => adapters.get(name),
      toConversation: async () => {
        throw new Error('every user here has a channel');
      },
      onTrouble: (trouble) => troubles.push(trouble),
      logger: silentLogger(),
      now: () => clock,
    });
    const sender = new OutboxSender({
      database: db(),
      adapter: (name) => adapters.get(name),
      logger: silentLogger(),
      now: () => clock,
      onFinal: (tx, row, outcome) => router.settled(tx, row, outcome),
      ...options,
    });
    /**
     * Passes of the sender with the clock moved past every backoff, until nothing is open; then
     * the sender stops (on PGlite the chat lock is in-process: one sender per test).
     */
    const settle = async () => {
      for (let pass = 0; pass < 8; pass++) {
        await sender.flush();
        clock = new Date(clock.getTime() + 11 * 60_000);
      }
      await sender.stop();
    };
    return { router, settle };
  };
  /** A user on Telegram (primary) and Slack (written from more recently than Telegram). */
  const user = async () => {
    const id = `dora${nextUser}`;
    const ids = { userId: id, telegram: String(88_000 + nextUser), slack: `U0DORA${nextUser}` };
    nextUser++;
    await ensureUser(db(), id);
    await linkIdentity(db(), { channel: 'telegram', externalId: ids.telegram, userId: id });
    await linkIdentity(db(), { channel: 'slack', externalId: ids.slack, userId: id });
    await noteIdentityActivity(db(), 'slack', ids.slack, { at: new Date() });
    await setPrimaryChannel(db(), id, 'telegram');
    return ids;
  };
  const receipt = async (id: string) => (await deliveryReceipts(db(), [id])).get(id)!;

  it('a long delivery whose second part is refused: the rest is not sent there, all of it goes to the next channel', async () => {
    const dora = await user();
    const { router, settle } = setup();
    const long = ['First part.', 'Second part.', 'Third part.']
      .map((line) => line.padEnd(3000, '.'))
      .join('\n\n');
    telegram.failNext(
      'sendMessage',
      { status: 200, json: { ok: true, result: { message_id: 9001 } } },
      BLOCKED,
    );
    const delivery = await router.deliver(dora.userId, long, 'workflow');
    await settle();
    const onTelegram = await outboxRows(db(), { channel: 'telegram', chatId: dora.telegram });
    expect(onTelegram.map((row) => row.status)).toEqual(['sent', 'failed', 'failed']);
    expect(onTelegram[2]!.lastError).toContain('an earlier part of this delivery failed on telegram');
    expect(telegram.calls('sendMessage').filter((call) => call.body?.chat_id === dora.telegram)).toHaveLength(
      2,
    );
    const onSlack = slack.posts.filter((post) => post.channel === dora.slack);
    expect(onSlack).toHaveLength(3);
    expect(await receipt(delivery.deliveryId)).toMatchObject({
      status: 'delivered',
      channel: 'slack',
      fallback: true,
      attempts: [
        { channel: 'telegram', status: 'failed' },
        { channel: 'slack', status: 'delivered' },
      ],
    });
    expect(troubles.at(-1)).toMatchObject({
      userId: dora.userId,
      source: 'workflow',
      failed: [{ channel: 'telegram', error: expect.stringContaining('blocked') }],
      rerouted: { channel: 'slack' },
    });
  });

  it('a platform outage longer than the retries gives up on that channel and falls back', async () => {
    const dora = await user();
    const { router, settle } = setup({ maxAttempts: 3 });
    telegram.failNext('sendMessage', gatewayErrorPage(502), gatewayErrorPage(503), gatewayErrorPage(504));
    const delivery = await router.deliver(dora.userId, 'Through the outage.', 'reminder');
    await settle();
    expect(await receipt(delivery.deliveryId)).toMatchObject({
      status: 'delivered',
      channel: 'slack',
      attempts: [
        { channel: 'telegram', status: 'failed', error: expect.stringContaining('gave up after 3 attempts') },
        { channel: 'slack', status: 'delivered' },
      ],
    });
    expect(slack.posts.filter((post) => post.channel === dora.slack).map((post) => post.text)).toEqual([
      'Through the outage.',
    ]);
  });

  it('an unknown outcome is ambiguous: not sent on another channel, a copy waits in the inbox', async () => {
    const dora = await user();
    const { router, settle } = setup({ sendTimeoutMs: 300 });
    telegram.failNext('sendMessage', { hang: true });
    const before = troubles.length;
    const delivery = await router.deliver(dora.userId, 'Did this arrive?', 'workflow');
    await settle();
    expect(await receipt(delivery.deliveryId)).toMatchObject({
      status: 'ambiguous',
      channel: 'telegram',
      inbox: true,
      attempts: [{ channel: 'telegram', status: 'ambiguous' }],
    });
    expect(slack.posts.filter((post) => post.channel === dora.slack)).toEqual([]);
    const [entry] = await inboxOf(db(), dora.userId);
    expect(entry).toMatchObject({ text: 'Did this arrive?', deliveryId: delivery.deliveryId });
    expect(entry!.note).toContain('may not have reached you on telegram');
    expect(troubles.length).toBe(before);
  });

  it('a send a crash interrupted settles its delivery as ambiguous', async () => {
    const dora = await user();
    const { router, settle } = setup();
    const delivery = await router.deliver(dora.userId, 'In flight at the crash.', 'workflow');
    await db().query("UPDATE outbox_messages SET status = 'sending', attempts = 1 WHERE delivery_id = $1", [
      delivery.deliveryId,
    ]);
    await settle();
    expect(await receipt(delivery.deliveryId)).toMatchObject({ status: 'ambiguous', channel: 'telegram' });
    expect(telegram.sent.some((message) => message.chat_id === dora.telegram)).toBe(false);
  });

  it('an alert no channel takes waits in the inbox and raises no alert about itself', async () => {
    const dora = await user();
    const { router, settle } = setup();
    telegram.failNext('sendMessage', BLOCKED);
    slack.failNext('chat.postMessage', { status: 200, json: { ok: false, error: 'channel_not_found' } });
    const before = troubles.length;
    const delivery = await router.deliver(dora.userId, '[ERROR] Steward: something broke', 'alert');
    await settle();
    expect(await receipt(delivery.deliveryId)).toMatchObject({
      status: 'failed',
      channel: 'inbox',
      inbox: true,
    });
    expect(troubles.length).toBe(before);
    expect(await unreadInboxCount(db(), dora.userId)).toBe(1);
    const [entry] = await inboxOf(db(), dora.userId);
    expect(entry!.note).toBe(
      'Not delivered on any channel (telegram: HTTP 403: Forbidden: bot was blocked by the user; slack: channel_not_found).',
    );
    // Another user cannot mark it read; its own user can.
    expect(await markInboxRead(db(), { userId: 'someone-else', id: entry!.id })).toBe(0);
    expect(await markInboxRead(db(), { userId: dora.userId, id: entry!.id })).toBe(1);
    expect(await unreadInboxCount(db(), dora.userId)).toBe(0);
  });
});
