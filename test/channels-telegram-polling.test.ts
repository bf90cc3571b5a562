import { Api } from 'grammy';
import type { Update } from 'grammy/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LongPoller } from '../src/channels/telegram/long-polling.ts';
import { silentLogger } from '../src/logging/logger.ts';
import { telegramText } from './support/channel-fixtures.ts';
import { useTelegramSteward } from './support/channels.ts';
import { backends } from './support/db.ts';
import { FAKE_BOT_TOKEN, type FakeTelegram, startFakeTelegram } from './support/fake-telegram.ts';

describe('Telegram long polling', () => {
  let telegram: FakeTelegram;
  beforeAll(async () => {
    telegram = await startFakeTelegram();
  });
  afterAll(async () => {
    await telegram?.close();
  });

  it('restarts a stalled poll and confirms updates only after they were stored', async () => {
    telegram.failNext('getUpdates', { hang: true });
    const stored: number[] = [];
    let failOnce = true;
    const poller = new LongPoller({
      api: new Api(FAKE_BOT_TOKEN, { apiRoot: telegram.url }),
      logger: silentLogger(),
      pollTimeoutSeconds: 1,
      stallGraceMs: 300,
      handle: async (update) => {
        if (update.update_id === 11 && failOnce) {
          failOnce = false;
          throw new Error('database down');
        }
        stored.push(update.update_id);
      },
    });
    poller.start();
    try {
      telegram.queueUpdate(telegramText({ updateId: 10 }) as unknown as Update);
      telegram.queueUpdate(telegramText({ updateId: 11, messageId: 2 }) as unknown as Update);
      await expect.poll(() => stored, { timeout: 15_000 }).toEqual([10, 11]);
      expect(poller.stalls).toBe(1);
      // 10 was confirmed (offset 11) before 11 failed to store; 11 was fetched again, then confirmed.
      await expect.poll(() => telegram.polls.includes(12), { timeout: 5_000 }).toBe(true);
      expect(telegram.polls.slice(0, 3)).toEqual([undefined, 11, 12]);
      expect(telegram.calls('getUpdates').length).toBeGreaterThanOrEqual(4);
    } finally {
      await poller.stop();
    }
  });
});

describe(`Telegram without a public URL [${backends().at(-1)}]`, () => {
  const { llm, telegram, steward } = useTelegramSteward(backends().at(-1)!, {
    allow: ['telegram:1111'],
    secret: 'unused-secret',
  });

  it('long-polls, answers, and serves no webhook', async () => {
    llm.enqueue({ text: 'Polled and answered.' });
    telegram.queueUpdate(telegramText({ updateId: 77, text: 'are you there?' }) as unknown as Update);
    await expect
      .poll(() => telegram.sent.map((message) => message.text), { timeout: 15_000 })
      .toEqual(['Polled and answered.']);
    expect(telegram.webhooks).toEqual([]);
    expect(telegram.calls('deleteWebhook').length).toBeGreaterThan(0);
    const webhook = await steward.post('/webhooks/telegram', telegramText(), {
      'x-telegram-bot-api-secret-token': 'unused-secret',
    });
    expect(webhook.status).toBe(404);
    const [status] = (await steward.runtime.channels.status()).filter(
      (entry) => entry.channel === 'telegram',
    );
    expect(status).toMatchObject({ configured: true, mode: 'polling', webhookUrl: null });
    expect(status!.problems.join(' ')).toContain('STEWARD_PUBLIC_URL');
    llm.assertDone();
  });
});
