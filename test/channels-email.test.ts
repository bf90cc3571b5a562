import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseIdentity } from '../src/channels/index.ts';
import type { Runtime } from '../src/runtime.ts';
import { type ChannelSteward, startChannelSteward, startChannelsRuntime } from './support/channels.ts';
import { backends, createTestDatabase, type TestDatabase } from './support/db.ts';
import { type FakeImap, startFakeImap } from './support/fake-imap.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { startFakeSmtp } from './support/fake-smtp.ts';
import { ASSISTANT, rawMail, readSent } from './support/mail-fixtures.ts';

type FakeSmtp = Awaited<ReturnType<typeof startFakeSmtp>>;

const ANA = 'ana@example.org';
const PASSWORD = 'imap-pass-1234';

const channelsYaml = (imap: FakeImap, smtp: FakeSmtp, pollSeconds = 60) => `channels:
  allow: ["email:${ANA}"]
  email: "on"
  email_poll_seconds: ${pollSeconds}
email:
  imap_url: "${imap.url}"
  smtp_url: "${smtp.url}"
  from: "Steward <${ASSISTANT}>"
`;

/** Waits for `condition` (hooks cannot use expect.poll). */
async function until(condition: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const idling = (imap: FakeImap) => imap.commands.some((command) => / IDLE$/i.test(command));

for (const backend of backends()) {
  describe(`Email as a channel over a fake IMAP and SMTP server [${backend}]`, { timeout: 60_000 }, () => {
    let llm: FakeLlm;
    let imap: FakeImap;
    let smtp: FakeSmtp;
    let steward: ChannelSteward;
    const sentTo = (address: string) => smtp.received.filter((mail) => mail.to.includes(address));
    const mailsIn = (sql: string, params: unknown[]) => steward.count(sql, params);
    /**
     * Waits until Steward has handled the mail with UID `uid`: stored it, or passed it by. The
     * inbox's cursor moves past a mail only once that is done, so whatever it made of the mail
     * is in the database by then.
     */
    const handled = (uid: number) =>
      expect
        .poll(
          () =>
            mailsIn(
              "SELECT value::int AS count FROM channel_cursors WHERE channel = 'email' AND name = 'last_uid'",
              [],
            ),
          { timeout: 15_000, interval: 20 },
        )
        .toBeGreaterThanOrEqual(uid);

    beforeAll(async () => {
      llm = await startFakeLlm();
      imap = await startFakeImap({ user: ASSISTANT, password: PASSWORD });
      smtp = await startFakeSmtp({ user: ASSISTANT, password: 'smtp-pass-1234' });
      // Mail from before the channel was turned on: never answered.
      imap.add('INBOX', rawMail({ from: ANA, subject: 'Old', text: 'an old question' }).raw);
      steward = await startChannelSteward(backend, llm, channelsYaml(imap, smtp));
      await until(() => idling(imap));
    });
    afterAll(async () => {
      await steward?.close();
      await smtp?.close();
      await imap?.close();
      await llm?.close();
    });

    it('answers in the same thread, text with an HTML alternative, quoted history left out', async () => {
      llm.enqueue({ text: 'Booked for **Friday** at [Luigi’s](https://luigi.example).' });
      const { raw, messageId } = rawMail({
        from: `Ana Lima <${ANA}>`,
        subject: 'Re: Dinner',
        text: 'Yes, book it for Friday.\n\nOn Mon, 3 Nov 2026 at 10:00, Steward <steward@example.com> wrote:\n> Shall I book the table?\n',
        headers: {
          'In-Reply-To': '<earlier@steward.example>',
          References: '<start@mail.example.org> <earlier@steward.example>',
        },
      });
      imap.add('INBOX', raw);
      await expect.poll(() => sentTo(ANA).length, { timeout: 15_000 }).toBe(1);
      const reply = await readSent(sentTo(ANA)[0]!.raw);
      expect(reply).toMatchObject({
        subject: 'Re: Dinner',
        inReplyTo: messageId,
        references: ['<start@mail.example.org>', '<earlier@steward.example>', messageId],
        text: 'Booked for Friday at Luigi’s (https://luigi.example).',
      });
      expect(reply.html).toContain('Booked for <strong>Friday</strong> at <a href="https://luigi.example">');
      expect(reply.header('auto-submitted')).toBe('auto-replied');
      const shown = JSON.stringify(llm.chatRequests.at(-1)!.body.messages);
      expect(shown).toContain('Yes, book it for Friday.');
      expect(shown).not.toContain('Shall I book the table?');
      expect(shown).not.toContain('an old question');
      llm.assertDone();
    });

    it('answers a mail delivered twice once', async () => {
      llm.enqueue({ text: 'Once.' });
      const mail = rawMail({ from: ANA, subject: 'Twice', text: 'say it once' });
      imap.add('INBOX', mail.raw);
      await expect.poll(() => sentTo(ANA).length, { timeout: 15_000 }).toBe(2);
      await handled(imap.add('INBOX', mail.raw));
      // Only a second stored copy could be answered: there is none.
      expect(sentTo(ANA)).toHaveLength(2);
      expect(
        await mailsIn(
          "SELECT count(*) FROM inbound_messages WHERE channel = 'email' AND channel_message_id = $1",
          [mail.messageId],
        ),
      ).toBe(1);
      llm.assertDone();
    });

    it('never answers auto-replies, bulk or list mail, bounces, or its own mail', async () => {
      const robots = [
        rawMail({
          from: ANA,
          subject: 'Out of office',
          text: 'I am away.',
          headers: { 'Auto-Submitted': 'auto-replied' },
        }),
        rawMail({ from: ANA, subject: 'Newsletter', text: 'News.', headers: { Precedence: 'bulk' } }),
        rawMail({
          from: ANA,
          subject: 'Digest',
          text: 'List mail.',
          headers: { 'List-Id': '<team.lists.example.org>' },
        }),
        rawMail({
          from: 'MAILER-DAEMON@mail.example.org',
          subject: 'Undelivered Mail Returned to Sender',
          text: 'Bounce.',
        }),
        rawMail({ from: ASSISTANT, subject: 'Re: loop', text: 'My own reply.' }),
        rawMail({ from: ANA, subject: 'Junk', text: 'Junk.', headers: { Precedence: 'junk' } }),
      ];
      const sent = smtp.received.length;
      const before = llm.chatRequests.length;
      await handled(Math.max(...robots.map((robot) => imap.add('INBOX', robot.raw))));
      // Only a stored mail is answered: none of them is (checked below).
      expect(smtp.received).toHaveLength(sent);
      expect(llm.chatRequests).toHaveLength(before);
      for (const robot of robots) {
        expect(
          await mailsIn('SELECT count(*) FROM inbound_messages WHERE channel_message_id = $1', [
            robot.messageId,
          ]),
        ).toBe(0);
      }
    });

    it('never takes mail whose sender the receiving server did not prove, however admitted its From', async () => {
      const forged = [
        rawMail({
          from: `Ana Lima <${ANA}>`,
          subject: 'Transfer',
          text: 'pay the invoice to this account',
          headers: {
            'Authentication-Results':
              'mx.example.com; spf=fail smtp.mailfrom=example.org; dmarc=fail header.from=example.org',
          },
        }),
        rawMail({
          from: ANA,
          subject: 'Transfer',
          text: 'signed by someone else',
          headers: {
            'Authentication-Results':
              'mx.example.com; dkim=pass header.d=evil.example; dmarc=fail header.from=example.org',
          },
        }),
      ];
      const sent = smtp.received.length;
      const before = llm.chatRequests.length;
      await handled(Math.max(...forged.map((mail) => imap.add('INBOX', mail.raw))));
      // Only a stored mail is answered: none of them is (checked below).
      expect(smtp.received).toHaveLength(sent);
      expect(llm.chatRequests).toHaveLength(before);
      for (const mail of forged) {
        expect(
          await mailsIn('SELECT count(*) FROM inbound_messages WHERE channel_message_id = $1', [
            mail.messageId,
          ]),
        ).toBe(0);
      }
    });

    it('tells a stranger their pairing code once, then nothing; approved, serves them as email:<address>', async () => {
      const bob = 'bob@example.net';
      imap.add('INBOX', rawMail({ from: `Bob <${bob}>`, subject: 'Hello', text: 'who are you?' }).raw);
      await expect.poll(() => sentTo(bob).length, { timeout: 15_000 }).toBe(1);
      const pairing = await readSent(sentTo(bob)[0]!.raw);
      expect(pairing.subject).toBe('Re: Hello');
      const code = /\b([A-Z2-9]{8})\b/.exec(pairing.text)?.[1];
      expect(code).toBeDefined();
      imap.add('INBOX', rawMail({ from: bob, subject: 'Hello?', text: 'anyone there?' }).raw);
      imap.add('INBOX', rawMail({ from: bob, subject: 'Hello??', text: 'hello?' }).raw);
      await expect
        .poll(
          () =>
            mailsIn("SELECT count(*) FROM inbound_messages WHERE sender_id = $1 AND status = 'pairing'", [
              bob,
            ]),
          {
            timeout: 15_000,
          },
        )
        .toBe(3);
      // All three are settled, and only the first reply was ever queued (with its row's status).
      expect(
        await mailsIn("SELECT count(*) FROM outbox_messages WHERE channel = 'email' AND chat_id = $1", [bob]),
      ).toBe(1);
      expect(sentTo(bob)).toHaveLength(1);
      expect(JSON.stringify(llm.chatRequests.map((request) => request.body.messages))).not.toContain(
        'who are you',
      );
      const approval = await steward.runtime.channels.approvePairing(code!);
      expect(approval).toMatchObject({ ok: true, userId: `email:${bob}` });
      await expect.poll(() => sentTo(bob).length, { timeout: 15_000 }).toBe(2);
      expect((await readSent(sentTo(bob)[1]!.raw)).text).toContain('approved');
      llm.enqueue({ text: 'Hello, Bob.' });
      imap.add('INBOX', rawMail({ from: bob, subject: 'Now', text: 'now?' }).raw);
      await expect.poll(() => sentTo(bob).length, { timeout: 15_000 }).toBe(3);
      expect((await readSent(sentTo(bob)[2]!.raw)).text).toBe('Hello, Bob.');
      llm.assertDone();
    });

    it('serves an address linked with `users link` as that user', async () => {
      const carol = 'carol@example.com';
      const identity = parseIdentity(`email:${carol}`);
      expect(identity).toEqual({ channel: 'email', senderId: carol });
      await steward.runtime.channels.linkSender(identity!.channel, identity!.senderId, 'local');
      llm.enqueue({ text: 'Hello, Carol.' });
      imap.add('INBOX', rawMail({ from: `Carol <${carol}>`, subject: 'Hi', text: 'hi' }).raw);
      await expect.poll(() => sentTo(carol).length, { timeout: 15_000 }).toBe(1);
      const [turn] = await steward.runtime.database.query<{ user_id: string }>(
        'SELECT user_id FROM turns ORDER BY started_at DESC LIMIT 1',
      );
      expect(turn!.user_id).toBe('local');
      llm.assertDone();
    });

    it('retries a reply the SMTP server turns away for now; it is sent once', async () => {
      smtp.failNext(
        { code: 451, message: '4.3.0 Temporary local problem, try later' },
        { code: 421, message: '4.7.0 Too many connections, try later' },
      );
      const attempts = smtp.attempts();
      llm.enqueue({ text: 'After the outage.' });
      imap.add('INBOX', rawMail({ from: ANA, subject: 'Still there?', text: 'are you there?' }).raw);
      await expect
        .poll(async () => (await Promise.all(sentTo(ANA).map((mail) => readSent(mail.raw)))).at(-1)?.text, {
          timeout: 20_000,
        })
        .toBe('After the outage.');
      expect(smtp.attempts() - attempts).toBe(3);
      const texts = await Promise.all(sentTo(ANA).map(async (mail) => (await readSent(mail.raw)).text));
      expect(texts.filter((text) => text === 'After the outage.')).toHaveLength(1);
      llm.assertDone();
    });
  });
}

describe(`Email channel across a restart and a server without IDLE [${backends().at(-1)}]`, {
  timeout: 90_000,
}, () => {
  let llm: FakeLlm;
  let imap: FakeImap;
  let smtp: FakeSmtp;
  let db: TestDatabase;
  let runtime: Runtime | null = null;
  const start = () => startChannelsRuntime(llm.url, channelsYaml(imap, smtp, 1), db.database);
  const texts = () => Promise.all(smtp.received.map(async (mail) => (await readSent(mail.raw)).text));
  beforeAll(async () => {
    llm = await startFakeLlm();
    imap = await startFakeImap({ user: ASSISTANT, password: PASSWORD, idle: false });
    smtp = await startFakeSmtp({ user: ASSISTANT, password: 'smtp-pass-1234' });
    db = await createTestDatabase(backends().at(-1)!);
  });
  afterAll(async () => {
    await runtime?.close();
    await db?.drop();
    await smtp?.close();
    await imap?.close();
    await llm?.close();
  });

  it('polls without IDLE; after a restart neither replays nor skips; a rebuilt inbox loses nothing', async () => {
    runtime = await start();
    await expect
      .poll(() => imap.commands.filter((command) => /UID SEARCH/i.test(command)).length)
      .toBeGreaterThan(0);
    expect(imap.commands.some((command) => / IDLE$/i.test(command))).toBe(false);
    llm.enqueue({ text: 'First answer.' });
    imap.add('INBOX', rawMail({ from: ANA, subject: 'One', text: 'first' }).raw);
    await expect.poll(texts, { timeout: 15_000 }).toEqual(['First answer.']);
    await runtime.close();
    runtime = null;

    // While Steward is down: two questions.
    llm.enqueue({ text: 'Second answer.' }, { text: 'Third answer.' });
    imap.add('INBOX', rawMail({ from: ANA, subject: 'Two', text: 'second' }).raw);
    imap.add('INBOX', rawMail({ from: ANA, subject: 'Three', text: 'third' }).raw);
    runtime = await start();
    await expect
      .poll(texts, { timeout: 20_000 })
      .toEqual(['First answer.', 'Second answer.', 'Third answer.']);
    await runtime.close();
    runtime = null;

    // The inbox rebuilt (UIDs renumbered) while Steward was down, and one new mail in it.
    imap.rebuild('INBOX');
    llm.enqueue({ text: 'Fourth answer.' });
    imap.add('INBOX', rawMail({ from: ANA, subject: 'Four', text: 'fourth' }).raw);
    runtime = await start();
    await expect
      .poll(texts, { timeout: 20_000 })
      .toEqual(['First answer.', 'Second answer.', 'Third answer.', 'Fourth answer.']);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(smtp.received).toHaveLength(4);
    llm.assertDone();
  });
});
