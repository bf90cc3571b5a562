import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, withField } from './support/channel-fixtures.ts';
import { type ChannelSteward, startChannelSteward } from './support/channels.ts';
import { backends } from './support/db.ts';
import {
  FAKE_PHONE_NUMBER_ID,
  FAKE_WHATSAPP_TOKEN,
  type FakeGraph,
  startFakeGraph,
} from './support/fake-graph.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';

const APP_SECRET = 'whatsapp-app-secret-0123';
const VERIFY_TOKEN = 'whatsapp-verify-token-0123';
const SENDER = '16505551234';

const signature = (body: string, secret = APP_SECRET) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

for (const backend of backends()) {
  describe(`WhatsApp Cloud API [${backend}]`, () => {
    let llm: FakeLlm;
    let graph: FakeGraph;
    let steward: ChannelSteward;
    const deliver = (payload: object, secret?: string) => {
      const body = JSON.stringify(payload);
      return steward.post('/webhooks/whatsapp', body, { 'x-hub-signature-256': signature(body, secret) });
    };
    const textMessage = (id: string, text: string) => {
      const payload = fixture<{
        entry: Array<{
          changes: Array<{ value: { messages: Array<{ id: string; text: { body: string } }> } }>;
        }>;
      }>('whatsapp', 'text-message');
      const message = payload.entry[0]!.changes[0]!.value.messages[0]!;
      message.id = id;
      message.text.body = text;
      return payload;
    };

    beforeAll(async () => {
      llm = await startFakeLlm();
      graph = await startFakeGraph();
      steward = await startChannelSteward(
        backend,
        llm,
        `channels:
  allow: ["whatsapp:${SENDER}"]
  whatsapp:
    access_token: "${FAKE_WHATSAPP_TOKEN}"
    app_secret: "${APP_SECRET}"
    verify_token: "${VERIFY_TOKEN}"
    phone_number_id: "${FAKE_PHONE_NUMBER_ID}"
    graph_url: "${graph.graphUrl}"
`,
      );
    });
    afterAll(async () => {
      await steward?.close();
      await graph?.close();
      await llm?.close();
    });

    it('answers the subscription handshake only for subscribe with the right verify token', async () => {
      const handshake = (mode: string, token: string) =>
        steward.app.request(
          `/webhooks/whatsapp?hub.mode=${mode}&hub.verify_token=${token}&hub.challenge=1158201444`,
        );
      const ok = await handshake('subscribe', VERIFY_TOKEN);
      expect(ok.status).toBe(200);
      expect(await ok.text()).toBe('1158201444');
      expect((await handshake('subscribe', 'wrong-token')).status).toBe(403);
      expect((await handshake('unsubscribe', VERIFY_TOKEN)).status).toBe(403);
    });

    it('verifies, stores, answers once through the Graph API, and ignores status callbacks', async () => {
      llm.enqueue({ text: 'Yes: **blue** and green.', latencyMs: 200 });
      const payload = textMessage('wamid.one', 'Does it come in another color?');
      const statuses = await Promise.all([
        deliver(payload),
        deliver(payload),
        deliver(fixture('whatsapp', 'status-delivered')),
      ]);
      for (let retry = 0; retry < 3; retry++) statuses.push(await deliver(payload));
      expect(statuses.map((response) => response.status)).toEqual([200, 200, 200, 200, 200, 200]);
      await expect.poll(() => graph.sent.length, { timeout: 10_000 }).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(graph.sent).toEqual([
        { to: SENDER, body: 'Yes: *blue* and green.', id: expect.stringMatching(/^wamid\./) },
      ]);
      expect(llm.chatRequests).toHaveLength(1);
      const [row] = await steward.runtime.database.query<{ platform_message_id: string }>(
        "SELECT platform_message_id FROM outbox_messages WHERE channel = 'whatsapp'",
      );
      expect(row!.platform_message_id).toBe(graph.sent[0]!.id);
      llm.assertDone();
    });

    it('acknowledges and drops a signed payload it cannot use (wrong-typed fields), never a 503', async () => {
      const before = await steward.count('SELECT count(*) FROM inbound_messages');
      const unusable = [
        withField(textMessage('wamid.bad1', 'x'), 'entry.0.changes.0.value.messages', 5),
        withField(textMessage('wamid.bad2', 'x'), 'entry.0.changes.0.value.messages.0.text.body', 42),
        withField(textMessage('wamid.bad3', 'x'), 'entry', { id: '102290129340398' }),
        withField(textMessage('wamid.bad4', 'x'), 'entry.0.changes.0.value.messages.0.from', 16505551234),
      ];
      for (const payload of unusable) expect((await deliver(payload)).status).toBe(200);
      expect(await steward.count('SELECT count(*) FROM inbound_messages')).toBe(before);
      expect(
        await steward.count(
          "SELECT count FROM webhook_rejections WHERE channel = 'whatsapp' AND reason = 'dropped'",
        ),
      ).toBe(unusable.length);
      llm.assertDone();
    });

    it('keeps the good messages of a batch when one of them cannot be used', async () => {
      llm.enqueue({ text: 'Got the good one.' });
      const payload = textMessage('wamid.good', 'the good one');
      const messages = payload.entry[0]!.changes[0]!.value.messages as unknown[];
      messages.push({ ...(messages[0] as object), id: 'wamid.broken', text: { body: ['not', 'text'] } });
      expect((await deliver(payload)).status).toBe(200);
      await expect.poll(() => graph.sent.at(-1)?.body, { timeout: 10_000 }).toBe('Got the good one.');
      expect(
        await steward.count("SELECT count(*) FROM inbound_messages WHERE channel_message_id LIKE 'wamid.%'"),
      ).toBe(2);
      llm.assertDone();
    });

    it('refuses bad signatures with 401 and stores nothing', async () => {
      const before = await steward.count('SELECT count(*) FROM inbound_messages');
      const payload = textMessage('wamid.two', 'sneaky');
      const wrong = await deliver(payload, 'not-the-app-secret');
      const missing = await steward.post('/webhooks/whatsapp', payload);
      expect([wrong.status, missing.status]).toEqual([401, 401]);
      expect(await steward.count('SELECT count(*) FROM inbound_messages')).toBe(before);
      llm.assertDone();
    });

    it('keeps a reply in the outbox while the Graph API is down, then sends it', async () => {
      graph.failNext({
        status: 503,
        json: { error: { message: 'Service temporarily unavailable', code: 2 } },
      });
      llm.enqueue({ text: 'Back online.' });
      await deliver(textMessage('wamid.three', 'are you up?'));
      await expect.poll(() => graph.sent.at(-1)?.body, { timeout: 15_000 }).toBe('Back online.');
      // The fake records the send before Steward has read its answer: wait for the row.
      await expect
        .poll(
          async () =>
            (
              await steward.runtime.database.query<{ attempts: number; status: string }>(
                "SELECT attempts, status FROM outbox_messages WHERE text = 'Back online.'",
              )
            )[0],
          { timeout: 10_000 },
        )
        .toEqual({ attempts: 2, status: 'sent' });
      llm.assertDone();
    });
  });
}
