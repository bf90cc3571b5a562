import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseIdentity } from '../src/channels/index.ts';
import type { Runtime } from '../src/runtime.ts';
import { type ChannelSteward, startChannelSteward, startChannelsRuntime } from './support/channels.ts';
import { backends, createTestDatabase, type TestDatabase } from './support/db.ts';
import { gatewayErrorPage } from './support/fake-http.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import {
  FAKE_MATRIX_BOT,
  FAKE_MATRIX_TOKEN,
  type FakeMatrix,
  matrixText,
  startFakeMatrix,
} from './support/fake-matrix.ts';

const ALICE = '@alice:fake.example';
const BOB = '@bob:fake.example';

const channelsYaml = (matrix: FakeMatrix) => `channels:
  allow: ["matrix:${ALICE}"]
  matrix: { homeserver_url: "${matrix.url}", access_token: "${FAKE_MATRIX_TOKEN}", user_id: "${FAKE_MATRIX_BOT}" }
`;

/** Waits for `condition` (hooks cannot use expect.poll). */
async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const mention = (body: string) =>
  matrixText(`Steward: ${body}`, {
    format: 'org.matrix.custom.html',
    formatted_body: `<a href="https://matrix.to/#/${FAKE_MATRIX_BOT}">Steward</a>: ${body}`,
    'm.mentions': { user_ids: [FAKE_MATRIX_BOT] },
  });

for (const backend of backends()) {
  describe(`Matrix over a fake homeserver [${backend}]`, { timeout: 60_000 }, () => {
    let llm: FakeLlm;
    let matrix: FakeMatrix;
    let steward: ChannelSteward;
    const sentIn = (roomId: string) => matrix.sent.filter((sent) => sent.roomId === roomId);
    const DM = '!dm:fake.example';
    const GROUP = '!group:fake.example';

    beforeAll(async () => {
      llm = await startFakeLlm();
      matrix = await startFakeMatrix();
      matrix.createRoom({ id: GROUP, members: [ALICE, BOB] });
      // History from before Steward was set up: never answered.
      matrix.message(GROUP, ALICE, mention('an old question'));
      steward = await startChannelSteward(backend, llm, channelsYaml(matrix));
      await until(() => matrix.syncs.length >= 2);
    });
    afterAll(async () => {
      await steward?.close();
      await matrix?.close();
      await llm?.close();
    });

    it("joins an admitted user's invitation and answers there in Matrix HTML, typing meanwhile", async () => {
      matrix.invite(DM, ALICE);
      await expect.poll(() => matrix.joins, { timeout: 10_000 }).toContain(DM);
      llm.enqueue({ text: 'It is **noon**, see [the clock](https://time.example/now).', latencyMs: 300 });
      matrix.message(DM, ALICE, matrixText('what time is it?'));
      await expect.poll(() => sentIn(DM).length, { timeout: 15_000 }).toBe(1);
      const [reply] = sentIn(DM);
      expect(reply!.content).toEqual({
        msgtype: 'm.text',
        body: 'It is noon, see the clock (https://time.example/now).',
        format: 'org.matrix.custom.html',
        formatted_body: 'It is <strong>noon</strong>, see <a href="https://time.example/now">the clock</a>.',
      });
      expect(reply!.txnId).toMatch(/^steward-\d+-[0-9a-f]{12}$/);
      expect(matrix.typing).toContain(DM);
      expect(sentIn(GROUP)).toHaveLength(0); // the history was not answered
      expect(JSON.stringify(llm.chatRequests.map((request) => request.body.messages))).not.toContain(
        'an old question',
      );
      llm.assertDone();
    });

    it('declines an invitation from someone not admitted', async () => {
      matrix.invite('!spam:fake.example', '@mallory:evil.example');
      await expect.poll(() => matrix.leaves, { timeout: 10_000 }).toContain('!spam:fake.example');
      expect(matrix.joins).not.toContain('!spam:fake.example');
    });

    it('answers a mention in a group room as a reply, and nothing else said there', async () => {
      llm.enqueue({ text: 'Two tasks.' });
      matrix.message(GROUP, ALICE, matrixText('dinner at eight'));
      const asked = matrix.message(GROUP, ALICE, mention('what is on my list?'));
      await expect.poll(() => sentIn(GROUP).length, { timeout: 15_000 }).toBe(1);
      expect(sentIn(GROUP)[0]!.content).toMatchObject({
        body: 'Two tasks.',
        'm.relates_to': { 'm.in_reply_to': { event_id: asked } },
      });
      const shown = JSON.stringify(llm.chatRequests.at(-1)!.body.messages);
      expect(shown).toContain('what is on my list?');
      expect(shown).not.toContain('Steward:');
      expect(shown).not.toContain('dinner at eight');
      llm.assertDone();
    });

    it('says once that an encrypted room cannot be read, then leaves it', async () => {
      const secret = '!secret:fake.example';
      matrix.invite(secret, ALICE, { encrypted: true });
      await expect.poll(() => matrix.leaves, { timeout: 10_000 }).toContain(secret);
      expect(matrix.joins).toContain(secret);
      expect(sentIn(secret)).toHaveLength(1);
      expect(String(sentIn(secret)[0]!.content.body)).toContain('end-to-end encrypted');
      llm.assertDone();
    });

    it('answers a message delivered twice once, and drops an event it cannot use', async () => {
      const DM = '!twice:fake.example';
      matrix.createRoom({ id: DM, members: [ALICE] });
      llm.enqueue({ text: 'Once.' });
      const broken = matrix.message(DM, ALICE, { msgtype: 'm.text', body: 42 });
      const eventId = matrix.message(DM, ALICE, matrixText('say it once'));
      await expect.poll(() => sentIn(DM).at(-1)?.content.body, { timeout: 15_000 }).toBe('Once.');
      const replies = sentIn(DM).length;
      matrix.redeliver(DM, eventId);
      matrix.redeliver(DM, broken);
      // The long poll in flight returns them; the next /sync starts once they were handled.
      const syncs = matrix.syncs.length;
      await expect.poll(() => matrix.syncs.length, { timeout: 10_000 }).toBeGreaterThan(syncs);
      expect(sentIn(DM)).toHaveLength(replies);
      expect(
        await steward.count(
          "SELECT count(*) FROM inbound_messages WHERE channel = 'matrix' AND channel_message_id = $1",
          [eventId],
        ),
      ).toBe(1);
      expect(
        await steward.count(
          "SELECT count(*) FROM inbound_messages WHERE channel = 'matrix' AND channel_message_id = $1",
          [broken],
        ),
      ).toBe(0);
      llm.assertDone();
    });

    it('gives a stranger who mentions it a pairing code, then serves them as matrix:@user:server', async () => {
      matrix.message(GROUP, BOB, mention('hello, who are you?'));
      await expect.poll(() => sentIn(GROUP).length, { timeout: 15_000 }).toBe(2);
      const code = /\b([A-Z2-9]{8})\b/.exec(String(sentIn(GROUP)[1]!.content.body))?.[1];
      expect(code).toBeDefined();
      expect(JSON.stringify(llm.chatRequests.map((request) => request.body.messages))).not.toContain(
        'who are you',
      );
      const approval = await steward.runtime.channels.approvePairing(code!);
      expect(approval).toMatchObject({ ok: true, userId: `matrix:${BOB}` });
      await expect.poll(() => sentIn(GROUP).length, { timeout: 15_000 }).toBe(3);
      expect(String(sentIn(GROUP)[2]!.content.body)).toContain('approved');
      llm.enqueue({ text: 'Hello, Bob.' });
      matrix.message(GROUP, BOB, mention('now?'));
      await expect.poll(() => sentIn(GROUP).at(-1)?.content.body, { timeout: 15_000 }).toBe('Hello, Bob.');
      llm.assertDone();
    });

    it('accepts an invitation from an identity linked with `users link`, and serves it as that user', async () => {
      const identity = parseIdentity('matrix:@carol:fake.example');
      expect(identity).toEqual({ channel: 'matrix', senderId: '@carol:fake.example' });
      await steward.runtime.channels.linkSender(identity!.channel, identity!.senderId, 'local');
      const room = '!carol:fake.example';
      matrix.invite(room, '@carol:fake.example');
      await expect.poll(() => matrix.joins, { timeout: 10_000 }).toContain(room);
      llm.enqueue({ text: 'Hello, Carol.' });
      matrix.message(room, '@carol:fake.example', matrixText('hi'));
      await expect.poll(() => sentIn(room).at(-1)?.content.body, { timeout: 15_000 }).toBe('Hello, Carol.');
      const [turn] = await steward.runtime.database.query<{ user_id: string }>(
        'SELECT user_id FROM turns ORDER BY started_at DESC LIMIT 1',
      );
      expect(turn!.user_id).toBe('local');
      llm.assertDone();
    });

    it('retries a reply through a homeserver outage with the same transaction id; it arrives once', async () => {
      matrix.failNext('send', gatewayErrorPage(502), {
        status: 429,
        json: { errcode: 'M_LIMIT_EXCEEDED', error: 'Too many requests', retry_after_ms: 500 },
      });
      llm.enqueue({ text: 'After the outage.' });
      const before = matrix.calls('send').length;
      matrix.message(DM, ALICE, matrixText('are you there?'));
      await expect.poll(() => sentIn(DM).at(-1)?.content.body, { timeout: 20_000 }).toBe('After the outage.');
      const attempts = matrix.calls('send').slice(before);
      expect(attempts).toHaveLength(3);
      expect(new Set(attempts.map((call) => call.path)).size).toBe(1);
      expect(sentIn(DM).filter((sent) => sent.content.body === 'After the outage.')).toHaveLength(1);
      llm.assertDone();
    });
  });
}

describe(`Matrix across a restart [${backends().at(-1)}]`, { timeout: 90_000 }, () => {
  const ROOM = '!restart:fake.example';
  let llm: FakeLlm;
  let matrix: FakeMatrix;
  let db: TestDatabase;
  let runtime: Runtime | null = null;
  const start = () => startChannelsRuntime(llm.url, channelsYaml(matrix), db.database);
  beforeAll(async () => {
    llm = await startFakeLlm();
    matrix = await startFakeMatrix();
    matrix.createRoom({ id: ROOM, members: [ALICE, BOB] });
    db = await createTestDatabase(backends().at(-1)!);
  });
  afterAll(async () => {
    await runtime?.close();
    await db?.drop();
    await matrix?.close();
    await llm?.close();
  });

  it('neither replays nor skips: the stored since token picks up where it stopped, gaps filled', async () => {
    runtime = await start();
    await expect.poll(() => matrix.syncs.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    llm.enqueue({ text: 'First answer.' });
    matrix.message(ROOM, ALICE, mention('first'));
    await expect.poll(() => matrix.sent.length, { timeout: 15_000 }).toBe(1);
    await runtime.close();
    runtime = null;

    // While Steward is down: a question, then more chatter than one sync's timeline holds.
    llm.enqueue({ text: 'Second answer.' });
    matrix.message(ROOM, ALICE, mention('second'));
    for (let index = 0; index < 60; index++) matrix.message(ROOM, BOB, matrixText(`chatter ${index}`));
    llm.enqueue({ text: 'Third answer.' });
    matrix.message(ROOM, ALICE, mention('third'));
    const syncsBefore = matrix.syncs.length;
    runtime = await start();
    await expect
      .poll(() => matrix.sent.map((sent) => sent.content.body), { timeout: 20_000 })
      .toEqual(['First answer.', 'Second answer.', 'Third answer.']);
    // The restarted sync began from the stored token, not from scratch.
    expect(matrix.syncs[syncsBefore]).not.toBeNull();
    expect(matrix.calls('messages').length).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(matrix.sent).toHaveLength(3);
    llm.assertDone();
  });
});
