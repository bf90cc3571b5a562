import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseIdentity } from '../src/channels/index.ts';
import { type ChannelSteward, startChannelSteward } from './support/channels.ts';
import { backends } from './support/db.ts';
import { gatewayErrorPage } from './support/fake-http.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { FAKE_SIGNAL_NUMBER, type FakeSignal, startFakeSignal } from './support/fake-signal.ts';
import { audioPartOf, SPOKEN_WORDS, VOICE_NOTE_OGG } from './support/voice.ts';

const ALICE = '+15550100001';
const BOB = '+15550100002';

/** Waits for `condition` (hooks cannot use expect.poll). */
async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const channelsYaml = (signal: FakeSignal) => `channels:
  allow: ["signal:${ALICE}"]
  signal: { cli_url: "${signal.url}", number: "${FAKE_SIGNAL_NUMBER}" }
`;

for (const backend of backends()) {
  describe(`Signal over a fake signal-cli REST API in json-rpc mode [${backend}]`, {
    timeout: 60_000,
  }, () => {
    let llm: FakeLlm;
    let signal: FakeSignal;
    let steward: ChannelSteward;
    const sentTo = (number: string) => signal.sent.filter((sent) => sent.recipients.includes(number));

    beforeAll(async () => {
      llm = await startFakeLlm();
      signal = await startFakeSignal();
      steward = await startChannelSteward(backend, llm, channelsYaml(signal));
      await until(() => signal.connections() === 1);
    });
    afterAll(async () => {
      await steward?.close();
      await signal?.close();
      await llm?.close();
    });

    it('answers a direct message in Signal text styles, typing meanwhile', async () => {
      llm.enqueue({
        text: 'It is **noon**, *roughly*: see [the clock](https://time.example/now). Use `a*b`.',
        latencyMs: 300,
      });
      signal.message(ALICE, 'what time is it?');
      await expect.poll(() => sentTo(ALICE).length, { timeout: 15_000 }).toBe(1);
      expect(sentTo(ALICE)[0]).toMatchObject({
        recipients: [ALICE],
        textMode: 'styled',
        message: 'It is **noon**, *roughly*: see the clock (https://time.example/now). Use `a\\*b`.',
      });
      expect(signal.typing).toContain(ALICE);
      expect(JSON.stringify(llm.chatRequests.at(-1)!.body.messages)).toContain('what time is it?');
      llm.assertDone();
    });

    it('answers a message delivered twice once; drops a malformed frame; ignores receipts and groups', async () => {
      llm.enqueue({ text: 'Once.' });
      signal.deliver({ envelope: { source: ALICE, timestamp: 'yesterday' } });
      signal.deliver({
        envelope: {
          source: ALICE,
          sourceNumber: ALICE,
          timestamp: Date.now(),
          receiptMessage: { isRead: true },
        },
        account: FAKE_SIGNAL_NUMBER,
      });
      signal.message(ALICE, 'a group chat line', { group: true });
      const frame = signal.message(ALICE, 'say it once');
      await expect.poll(() => sentTo(ALICE).at(-1)?.message, { timeout: 15_000 }).toBe('Once.');
      const replies = signal.sent.length;
      signal.deliver(frame);
      const id = `${ALICE}:${(frame.envelope as { timestamp: number }).timestamp}`;
      // Frames are handled in order: once a message sent after the copy is answered, the copy
      // has been handled too, and only that message was answered.
      llm.enqueue({ text: 'After it.' });
      signal.message(ALICE, 'and after it');
      await expect.poll(() => sentTo(ALICE).at(-1)?.message, { timeout: 15_000 }).toBe('After it.');
      expect(signal.sent).toHaveLength(replies + 1);
      expect(
        await steward.count(
          "SELECT count(*) FROM inbound_messages WHERE channel = 'signal' AND channel_message_id = $1",
          [id],
        ),
      ).toBe(1);
      expect(
        await steward.count("SELECT count(*) FROM inbound_messages WHERE channel = 'signal' AND text = $1", [
          'a group chat line',
        ]),
      ).toBe(0);
      llm.assertDone();
    });

    it('transcribes a voice note (an audio attachment) and answers the words', async () => {
      const before = llm.chatRequests.length;
      const id = signal.addAttachment(VOICE_NOTE_OGG, 'ogg');
      llm.enqueue({ text: SPOKEN_WORDS }, { text: 'I will remind you.' });
      signal.message(ALICE, null, {
        attachments: [{ contentType: 'audio/ogg', filename: null, id, size: VOICE_NOTE_OGG.length }],
      });
      await expect.poll(() => sentTo(ALICE).at(-1)?.message, { timeout: 30_000 }).toBe('I will remind you.');
      const [transcription, turn] = llm.chatRequests.slice(before);
      expect(audioPartOf(transcription!)).toEqual({ data: VOICE_NOTE_OGG.toString('base64'), format: 'ogg' });
      expect(JSON.stringify(turn!.body.messages)).toContain(SPOKEN_WORDS);
      expect(signal.calls('attachments').at(-1)!.path).toBe(`/v1/attachments/${id}`);
      llm.assertDone();
    });

    it('gives a stranger a pairing code, then serves them as signal:+number', async () => {
      signal.message(BOB, 'hello, who are you?', { name: 'Bob' });
      await expect.poll(() => sentTo(BOB).length, { timeout: 15_000 }).toBe(1);
      const code = /\b([A-Z2-9]{8})\b/.exec(sentTo(BOB)[0]!.message)?.[1];
      expect(code).toBeDefined();
      expect(JSON.stringify(llm.chatRequests.map((request) => request.body.messages))).not.toContain(
        'who are you',
      );
      const approval = await steward.runtime.channels.approvePairing(code!);
      expect(approval).toMatchObject({ ok: true, userId: `signal:${BOB}` });
      await expect.poll(() => sentTo(BOB).length, { timeout: 15_000 }).toBe(2);
      expect(sentTo(BOB)[1]!.message).toContain('approved');
      llm.enqueue({ text: 'Hello, Bob.' });
      signal.message(BOB, 'now?', { name: 'Bob' });
      await expect.poll(() => sentTo(BOB).at(-1)?.message, { timeout: 15_000 }).toBe('Hello, Bob.');
      llm.assertDone();
    });

    it('serves an identity linked with `users link` as that user', async () => {
      const carol = '+15550100003';
      const identity = parseIdentity(`signal:${carol}`);
      expect(identity).toEqual({ channel: 'signal', senderId: carol });
      await steward.runtime.channels.linkSender(identity!.channel, identity!.senderId, 'local');
      llm.enqueue({ text: 'Hello, Carol.' });
      signal.message(carol, 'hi', { name: 'Carol' });
      await expect.poll(() => sentTo(carol).at(-1)?.message, { timeout: 15_000 }).toBe('Hello, Carol.');
      const [turn] = await steward.runtime.database.query<{ user_id: string }>(
        'SELECT user_id FROM turns ORDER BY started_at DESC LIMIT 1',
      );
      expect(turn!.user_id).toBe('local');
      llm.assertDone();
    });

    it('retries a reply through a signal-cli outage; it arrives once', async () => {
      signal.failNext('send', gatewayErrorPage(502), {
        status: 429,
        json: { error: 'Rate limit exceeded' },
        headers: { 'retry-after': '1' },
      });
      llm.enqueue({ text: 'After the outage.' });
      const before = signal.calls('send').length;
      signal.message(ALICE, 'are you there?');
      await expect.poll(() => sentTo(ALICE).at(-1)?.message, { timeout: 20_000 }).toBe('After the outage.');
      expect(signal.calls('send').slice(before)).toHaveLength(3);
      expect(signal.sent.filter((sent) => sent.message === 'After the outage.')).toHaveLength(1);
      llm.assertDone();
    });

    it('reconnects when the WebSocket drops, and answers what arrives after', async () => {
      signal.dropSockets();
      await expect.poll(() => signal.connections(), { timeout: 15_000 }).toBe(2);
      llm.enqueue({ text: 'Still here.' });
      signal.message(ALICE, 'still there?');
      await expect.poll(() => sentTo(ALICE).at(-1)?.message, { timeout: 15_000 }).toBe('Still here.');
      llm.assertDone();
    });
  });
}

describe(`Signal over a fake signal-cli REST API in normal mode (polling) [${backends().at(-1)}]`, {
  timeout: 60_000,
}, () => {
  let llm: FakeLlm;
  let signal: FakeSignal;
  let steward: ChannelSteward;
  beforeAll(async () => {
    llm = await startFakeLlm();
    signal = await startFakeSignal({ mode: 'normal' });
    steward = await startChannelSteward(backends().at(-1)!, llm, channelsYaml(signal));
  });
  afterAll(async () => {
    await steward?.close();
    await signal?.close();
    await llm?.close();
  });

  it('polls GET /v1/receive, answers once a message handed over twice', async () => {
    llm.enqueue({ text: 'Polled.' });
    const frame = signal.message(ALICE, 'over polling');
    await expect.poll(() => signal.sent.at(-1)?.message, { timeout: 20_000 }).toBe('Polled.');
    signal.deliver(frame);
    const polls = signal.calls('receive').length;
    await expect.poll(() => signal.calls('receive').length, { timeout: 20_000 }).toBeGreaterThan(polls);
    expect(signal.sent).toHaveLength(1);
    expect(signal.calls('receive')[0]!.query.get('timeout')).toMatch(/^\d+$/);
    llm.assertDone();
  });
});
