import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, withField } from './support/channel-fixtures.ts';
import { type ChannelSteward, startChannelSteward } from './support/channels.ts';
import { backends } from './support/db.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { FAKE_SLACK_TOKEN, type FakeSlack, startFakeSlack } from './support/fake-slack.ts';

const SIGNING_SECRET = '8f742231b10e8888abcd99yyyzzz85a5';

function signed(
  body: string,
  options: { secret?: string; ageSeconds?: number } = {},
): Record<string, string> {
  const timestamp = String(Math.floor(Date.now() / 1000) - (options.ageSeconds ?? 0));
  const signature = createHmac('sha256', options.secret ?? SIGNING_SECRET)
    .update(`v0:${timestamp}:${body}`)
    .digest('hex');
  return { 'x-slack-request-timestamp': timestamp, 'x-slack-signature': `v0=${signature}` };
}

for (const backend of backends()) {
  describe(`Slack Events API [${backend}]`, () => {
    let llm: FakeLlm;
    let slack: FakeSlack;
    let steward: ChannelSteward;
    const event = (
      payload: object,
      options: { secret?: string; ageSeconds?: number; headers?: Record<string, string> } = {},
    ) => {
      const body = JSON.stringify(payload);
      return steward.post('/webhooks/slack/events', body, { ...signed(body, options), ...options.headers });
    };

    beforeAll(async () => {
      llm = await startFakeLlm();
      slack = await startFakeSlack();
      steward = await startChannelSteward(
        backend,
        llm,
        `channels:
  allow: ["slack:U123ABC456", "slack:U2147483697"]
  slack: { bot_token: "${FAKE_SLACK_TOKEN}", signing_secret: "${SIGNING_SECRET}", api_url: "${slack.apiUrl}" }
`,
      );
    });
    afterAll(async () => {
      await steward?.close();
      await slack?.close();
      await llm?.close();
    });

    it('answers the url_verification challenge', async () => {
      const response = await event(fixture('slack', 'url-verification'));
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
      });
    });

    it('answers a mention in its thread, in mrkdwn, once across retries', async () => {
      llm.enqueue({ text: 'It is **noon**, see [the clock](https://time.example/now).', latencyMs: 300 });
      const mention = fixture('slack', 'app-mention');
      const first = await event(mention);
      expect(first.status).toBe(200);
      for (let retry = 1; retry <= 4; retry++) {
        const again = await event(mention, {
          headers: { 'x-slack-retry-num': String(retry), 'x-slack-retry-reason': 'http_timeout' },
        });
        expect(again.status).toBe(200);
      }
      await expect.poll(() => slack.posts.length, { timeout: 10_000 }).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(slack.posts).toEqual([
        expect.objectContaining({
          channel: 'C123ABC456',
          thread_ts: '1515449522.000016',
          text: 'It is *noon*, see <https://time.example/now|the clock>.',
        }),
      ]);
      expect(JSON.stringify(llm.chatRequests.at(-1)!.body.messages)).toContain(
        'What is the hour of the pearl',
      );
      expect(JSON.stringify(llm.chatRequests.at(-1)!.body.messages)).not.toContain('U0LAN0Z89');
      llm.assertDone();
    });

    it('answers a DM unthreaded and ignores its own messages', async () => {
      llm.enqueue({ text: 'Loud and clear.' });
      const posts = slack.posts.length;
      expect((await event(fixture('slack', 'bot-message'))).status).toBe(200);
      expect((await event(fixture('slack', 'message-im'))).status).toBe(200);
      await expect.poll(() => slack.posts.length, { timeout: 10_000 }).toBe(posts + 1);
      expect(slack.posts.at(-1)).toEqual({
        channel: 'D024BE91L',
        text: 'Loud and clear.',
        ts: expect.any(String),
      });
      llm.assertDone();
    });

    it('acknowledges and drops a signed event it cannot use (wrong-typed fields), never a 503', async () => {
      const before = await steward.count('SELECT count(*) FROM inbound_messages');
      const mention = fixture('slack', 'app-mention');
      const unusable = [
        withField(mention, 'event.text', 42),
        withField(mention, 'event.user', { id: 'U123ABC456' }),
        withField(fixture('slack', 'message-im'), 'event.ts', 1355517523.000005),
        withField(mention, 'type', ['event_callback']),
      ];
      for (const payload of unusable) expect((await event(payload)).status).toBe(200);
      expect(await steward.count('SELECT count(*) FROM inbound_messages')).toBe(before);
      expect(
        await steward.count(
          "SELECT count FROM webhook_rejections WHERE channel = 'slack' AND reason = 'dropped'",
        ),
      ).toBe(unusable.length);
      // Events Steward never answers are acknowledged quietly, whatever their fields hold.
      expect((await event(fixture('slack', 'user-change'))).status).toBe(200);
      expect(
        await steward.count(
          "SELECT count FROM webhook_rejections WHERE channel = 'slack' AND reason = 'dropped'",
        ),
      ).toBe(unusable.length);
      llm.assertDone();
    });

    it('refuses unsigned, badly signed and stale requests with 401 and stores nothing', async () => {
      const before = await steward.count('SELECT count(*) FROM inbound_messages');
      const body = JSON.stringify(fixture('slack', 'message-im'));
      const unsigned = await steward.post('/webhooks/slack/events', body);
      const wrongSecret = await event(fixture('slack', 'message-im'), { secret: 'not-the-secret' });
      const stale = await event(fixture('slack', 'message-im'), { ageSeconds: 6 * 60 });
      const tampered = await steward.post(
        '/webhooks/slack/events',
        body.replace('hear me', 'obey me'),
        signed(body),
      );
      expect([unsigned.status, wrongSecret.status, stale.status, tampered.status]).toEqual([
        401, 401, 401, 401,
      ]);
      expect(await steward.count('SELECT count(*) FROM inbound_messages')).toBe(before);
      const [status] = (await steward.runtime.channels.status()).filter((entry) => entry.channel === 'slack');
      expect(status!.rejected).toBeGreaterThanOrEqual(4);
      llm.assertDone();
    });

    it('retries a rate-limited post after retry_after and reports the backlog meanwhile', async () => {
      slack.failNext('chat.postMessage', {
        status: 429,
        headers: { 'retry-after': '1' },
        json: { ok: false, error: 'ratelimited' },
      });
      llm.enqueue({ text: 'Eventually.' });
      const posts = slack.posts.length;
      const dm = fixture<{ event: { ts: string } }>('slack', 'message-im');
      dm.event.ts = '1355517600.000001';
      await event(dm);
      await expect
        .poll(
          async () =>
            (await steward.runtime.channels.status()).find((entry) => entry.channel === 'slack')!.backlog,
          {
            timeout: 10_000,
          },
        )
        .toBe(1);
      await expect.poll(() => slack.posts.length, { timeout: 10_000 }).toBe(posts + 1);
      expect(slack.posts.at(-1)!.text).toBe('Eventually.');
      llm.assertDone();
    });
  });
}
