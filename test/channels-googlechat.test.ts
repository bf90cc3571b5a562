import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, withField } from './support/channel-fixtures.ts';
import { type ChannelSteward, startChannelSteward } from './support/channels.ts';
import { backends } from './support/db.ts';
import { FAKE_PROJECT_NUMBER, type FakeGoogleChat, startFakeGoogleChat } from './support/fake-google-chat.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';

const SENDER = 'users/12345678901234567890';

for (const backend of backends()) {
  describe(`Google Chat [${backend}]`, () => {
    let llm: FakeLlm;
    let chat: FakeGoogleChat;
    let steward: ChannelSteward;
    const post = async (event: object, token?: string) =>
      steward.post('/webhooks/googlechat', event, {
        authorization: `Bearer ${token ?? (await chat.signToken())}`,
      });
    const message = (name: string, text: string, base = 'message-dm') => {
      const event = fixture<{ message: { name: string; text: string; argumentText: string } }>(
        'googlechat',
        base,
      );
      event.message.name = name;
      event.message.text = text;
      event.message.argumentText = text;
      return event;
    };

    beforeAll(async () => {
      llm = await startFakeLlm();
      chat = await startFakeGoogleChat();
      const keyFile = await chat.writeServiceAccount(
        path.join(mkdtempSync(path.join(os.tmpdir(), 'steward-gchat-')), 'sa.json'),
      );
      steward = await startChannelSteward(
        backend,
        llm,
        `channels:
  allow: ["googlechat:${SENDER}"]
  googlechat:
    project_number: "${FAKE_PROJECT_NUMBER}"
    jwks_url: "${chat.jwksUrl}"
    api_url: "${chat.url}"
    service_account: "${keyFile}"
`,
      );
    });
    afterAll(async () => {
      await steward?.close();
      await chat?.close();
      await llm?.close();
    });

    it('answers inside the request when the turn is quick, once across redeliveries', async () => {
      llm.enqueue({ text: 'Two **tasks** today.' });
      const event = fixture('googlechat', 'message-dm');
      const response = await post(event);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ text: 'Two *tasks* today.' });
      for (let again = 0; again < 4; again++) {
        const redelivered = await post(event);
        expect(redelivered.status).toBe(200);
        expect(await redelivered.json()).toEqual({});
      }
      expect(llm.chatRequests).toHaveLength(1);
      expect(chat.posts).toHaveLength(0);
      const [turn] = await steward.runtime.database.query<{ user_id: string }>('SELECT user_id FROM turns');
      expect(turn!.user_id).toBe(`googlechat:${SENDER}`);
      llm.assertDone();
    });

    it('says it is working on it when the turn is slow, and posts the answer in the thread later', async () => {
      const adapter = steward.runtime.channels.adapter('googlechat')!;
      // The sync window is 25 s in production; the adapter reads it per request.
      (adapter as unknown as { setSyncReplyMs(ms: number): void }).setSyncReplyMs(300);
      llm.enqueue({ text: 'The week, summarized.', latencyMs: 1_000 });
      const response = await post(
        message('spaces/RRRRRRRRRRR/messages/slow.slow', ' summarize the week', 'message-room'),
      );
      expect(await response.json()).toEqual({ text: expect.stringContaining('Working on it') });
      await expect.poll(() => chat.posts.length, { timeout: 10_000 }).toBe(1);
      expect(chat.posts[0]).toMatchObject({
        space: 'spaces/RRRRRRRRRRR',
        text: 'The week, summarized.',
        thread: 'spaces/RRRRRRRRRRR/threads/TTTTTTTTTTT',
      });
      expect(chat.tokensIssued).toBe(1);
      (adapter as unknown as { setSyncReplyMs(ms: number): void }).setSyncReplyMs(25_000);
      llm.assertDone();
    });

    it('refuses missing, stale, foreign and wrong-audience tokens with 401 and stores nothing', async () => {
      const before = await steward.count('SELECT count(*) FROM inbound_messages');
      const event = message('spaces/AAAAAAAAAAA/messages/refused.refused', 'let me in');
      const missing = await steward.post('/webhooks/googlechat', event);
      const stale = await post(event, await chat.signToken({ expiresInSeconds: -120 }));
      const foreign = await post(event, await chat.signToken({ foreignKey: true }));
      const audience = await post(event, await chat.signToken({ audience: '999' }));
      const issuer = await post(event, await chat.signToken({ issuer: 'someone@example.com' }));
      expect([missing, stale, foreign, audience, issuer].map((response) => response.status)).toEqual([
        401, 401, 401, 401, 401,
      ]);
      expect(await steward.count('SELECT count(*) FROM inbound_messages')).toBe(before);
      llm.assertDone();
    });

    it('acknowledges and drops a verified event it cannot use (wrong-typed fields), never a 503', async () => {
      const before = await steward.count('SELECT count(*) FROM inbound_messages');
      const event = message('spaces/AAAAAAAAAAA/messages/typed.typed', 'hello');
      const unusable = [
        withField(event, 'message.text', 42),
        withField(withField(event, 'message.argumentText', ['x']), 'message.text', ['x']),
        withField(event, 'message.sender', 'users/12345678901234567890'),
        withField(event, 'message.space.name', 7),
      ];
      for (const payload of unusable) {
        const response = await post(payload);
        expect(response.status).toBe(200);
        expect(await response.json()).toEqual({});
      }
      expect(await steward.count('SELECT count(*) FROM inbound_messages')).toBe(before);
      expect(
        await steward.count(
          "SELECT count FROM webhook_rejections WHERE channel = 'googlechat' AND reason = 'dropped'",
        ),
      ).toBe(unusable.length);
      // Other event types are acknowledged quietly.
      expect((await post(fixture('googlechat', 'added-to-space'))).status).toBe(200);
      llm.assertDone();
    });

    it('gives a stranger a pairing code in the response', async () => {
      const event = message('spaces/ZZZ/messages/stranger.stranger', 'hello?');
      (event as unknown as { message: { sender: { name: string } } }).message.sender.name = 'users/999';
      const response = await post(event);
      const body = (await response.json()) as { text: string };
      expect(body.text).toMatch(/\b[A-Z2-9]{8}\b/);
      llm.assertDone();
    });
  });
}
