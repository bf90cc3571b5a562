import { expect, it } from 'vitest';
import type { EmailProvider } from '../../../src/integrations/index.ts';

/** What a contract run needs around a provider: a way to deliver mail and to see what it sent. */
export type EmailFixture = {
  provider: EmailProvider;
  deliver(raw: string, options?: { unread?: boolean; date?: Date }): Promise<void> | void;
  sent(): Array<{ to: string[]; raw: string }>;
  draftCount(): number;
};

const message = (from: string, subject: string, body: string, extra = '') =>
  `From: ${from}\r\nTo: me@example.com\r\nSubject: ${subject}\r\nMessage-ID: <${subject.replace(/\W/g, '')}@example.com>\r\nDate: Mon, 05 Jan 2026 10:00:00 +0000\r\n${extra}\r\n${body}\r\n`;

/** The behaviour every EmailProvider must have; `make` returns a provider over an empty mailbox. */
export function emailProviderContract(make: () => Promise<EmailFixture>): void {
  it('finds messages by sender, words and unread, newest first, and reads one as text', async () => {
    const mail = await make();
    await mail.deliver(message('Ana <ana@example.com>', 'Invoice 42', 'Please pay invoice 42.'), {
      unread: true,
      date: new Date('2026-01-05T10:00:00Z'),
    });
    await mail.deliver(message('bob@example.com', 'Lunch', 'Lunch on Friday?'), {
      unread: false,
      date: new Date('2026-01-06T10:00:00Z'),
    });
    await mail.deliver(
      message(
        'Cy <cy@example.com>',
        'Report',
        '<html><body><p>The <b>Q1 report</b> is ready.</p></body></html>',
        'Content-Type: text/html; charset=utf-8\r\n',
      ),
      { unread: true, date: new Date('2026-01-07T10:00:00Z') },
    );
    const all = await mail.provider.search({ limit: 10 });
    expect(all.map((entry) => entry.subject)).toEqual(['Report', 'Lunch', 'Invoice 42']);
    const fromAna = await mail.provider.search({ from: 'ana@example.com', limit: 10 });
    expect(fromAna.map((entry) => entry.subject)).toEqual(['Invoice 42']);
    expect(fromAna[0]!.from).toEqual({ name: 'Ana', address: 'ana@example.com' });
    const unread = await mail.provider.search({ unread: true, limit: 10 });
    expect(unread.map((entry) => entry.subject).sort()).toEqual(['Invoice 42', 'Report']);
    expect((await mail.provider.search({ limit: 1 })).length).toBe(1);
    const report = await mail.provider.read(all[0]!.id);
    expect(report?.text).toContain('Q1 report');
    expect(report?.text).not.toContain('<b>');
    expect(await mail.provider.read('no-such-message')).toBeNull();
  });

  it('sends, replies in the thread, and saves drafts without sending', async () => {
    const mail = await make();
    await mail.deliver(message('Ana <ana@example.com>', 'Plans', 'Dinner?'), { unread: true });
    await mail.provider.send({ to: ['bob@example.com'], subject: 'Hello', text: 'Hi Bob' });
    const [first] = mail.sent();
    expect(first?.to).toEqual(['bob@example.com']);
    expect(first?.raw).toContain('Subject: Hello');
    const original = (await mail.provider.search({ limit: 1 }))[0]!;
    const read = await mail.provider.read(original.id);
    await mail.provider.send({
      to: ['ana@example.com'],
      subject: 'Re: Plans',
      text: 'Yes!',
      inReplyTo: read!.messageId,
      references: [read!.messageId!],
      threadId: read!.threadId,
    });
    expect(mail.sent()[1]?.raw).toMatch(/In-Reply-To: <Plans@example\.com>/);
    await mail.provider.saveDraft({ to: ['cy@example.com'], subject: 'Draft', text: 'Later' });
    expect(mail.sent().length).toBe(2);
    expect(mail.draftCount()).toBe(1);
  });

  it('archives out of the inbox and labels; unknown ids are false / null', async () => {
    const mail = await make();
    await mail.deliver(message('ana@example.com', 'Receipt', 'Thanks for your order'), { unread: true });
    const [receipt] = await mail.provider.search({ limit: 5 });
    const labels = await mail.provider.label(receipt!.id, { add: ['receipts'], remove: [] });
    expect(labels).toContain('receipts');
    expect((await mail.provider.search({ label: 'receipts', limit: 5 })).length).toBe(1);
    expect(await mail.provider.archive(receipt!.id)).toBe(true);
    expect(await mail.provider.search({ limit: 5 })).toEqual([]);
    expect(await mail.provider.archive('no-such-message')).toBe(false);
    expect(await mail.provider.label('no-such-message', { add: ['x'], remove: [] })).toBeNull();
  });
}
