import { afterAll, describe, expect, it } from 'vitest';
import { emailProviderContract } from '../../../test/support/contracts/email-contract.ts';
import { type FakeImap, startFakeImap } from '../../../test/support/fake-imap.ts';
import { startFakeSmtp } from '../../../test/support/fake-smtp.ts';
import { ImapEmailProvider } from './imap-email.ts';
import { IMAP_SCHEMES, parseMailUrl, SMTP_SCHEMES } from './mail-urls.ts';

const servers: Array<{ close(): Promise<void> }> = [];
afterAll(async () => {
  for (const server of servers) await server.close();
});

async function mailbox(options: { password?: string } = {}) {
  const imap = await startFakeImap({ user: 'me@example.com', password: 'imap-secret' });
  const smtp = await startFakeSmtp({ user: 'me@example.com', password: 'smtp-secret' });
  servers.push(imap, smtp);
  const imapUrl = options.password ? imap.url.replace('imap-secret', options.password) : imap.url;
  const provider = new ImapEmailProvider({
    imap: parseMailUrl(imapUrl, IMAP_SCHEMES)!,
    smtp: parseMailUrl(smtp.url, SMTP_SCHEMES)!,
    from: 'Me <me@example.com>',
    address: 'me@example.com',
    reconnect: 'steward connect email',
    timeoutMs: 5_000,
  });
  servers.push({ close: () => provider.close() });
  return { imap, smtp, provider };
}

describe('IMAP/SMTP email provider', () => {
  emailProviderContract(async () => {
    const { imap, smtp, provider } = await mailbox();
    return {
      provider,
      deliver: (raw, options = {}) => {
        imap.add('INBOX', raw, { flags: options.unread === false ? ['\\Seen'] : [], date: options.date });
      },
      sent: () => smtp.received.map((mail) => ({ to: mail.to, raw: mail.raw })),
      draftCount: () => (imap as FakeImap).mailboxes.get('Drafts')!.messages.length,
    };
  });

  it('reports a refused login as an auth failure naming how to reconnect', async () => {
    const { provider } = await mailbox({ password: 'wrong-password' });
    const failure = await provider.search({ limit: 1 }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ issue: 'auth' });
    expect(String((failure as Error).message)).toContain('steward connect email');
    expect(String((failure as Error).message)).not.toContain('wrong-password');
  });

  it('reports a server that is down as unavailable (the breaker counts it)', async () => {
    const provider = new ImapEmailProvider({
      imap: parseMailUrl('imap://me:pw@127.0.0.1:1', IMAP_SCHEMES)!,
      smtp: null,
      from: 'me@example.com',
      address: 'me@example.com',
      reconnect: 'steward connect email',
      timeoutMs: 2_000,
    });
    const failure = await provider.search({ limit: 1 }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ issue: 'unavailable', infrastructure: true });
    expect(String((failure as Error).message)).toContain('IMAP server 127.0.0.1');
  });
});

describe('plain imap:// and smtp://', () => {
  it('never upgrade with STARTTLS, even when the servers offer it', async () => {
    const imap = await startFakeImap({
      user: 'me@example.com',
      password: 'imap-secret',
      offerStartTls: true,
    });
    const smtp = await startFakeSmtp({
      user: 'me@example.com',
      password: 'smtp-secret',
      offerStartTls: true,
    });
    servers.push(imap, smtp);
    imap.add('INBOX', 'From: ana@example.com\nSubject: Hi\n\nHello');
    const provider = new ImapEmailProvider({
      imap: parseMailUrl(imap.url, IMAP_SCHEMES)!,
      smtp: parseMailUrl(smtp.url, SMTP_SCHEMES)!,
      from: 'me@example.com',
      address: 'me@example.com',
      reconnect: 'steward connect email',
      timeoutMs: 5_000,
    });
    servers.push({ close: () => provider.close() });
    expect((await provider.search({ limit: 5 })).map((message) => message.subject)).toEqual(['Hi']);
    await provider.send({ to: ['bob@example.com'], subject: 'Plain', text: 'over plain SMTP' });
    expect(imap.commands.some((line) => /STARTTLS/i.test(line))).toBe(false);
    expect(smtp.received.map((mail) => mail.secure)).toEqual([false]);
    expect(parseMailUrl(`${imap.url}?starttls=true`, IMAP_SCHEMES)?.starttls).toBe(true);
    expect(parseMailUrl('imaps://me:pw@mail.example.com', IMAP_SCHEMES)).toMatchObject({
      secure: true,
      port: 993,
    });
    expect(parseMailUrl('smtps://me:pw@mail.example.com', SMTP_SCHEMES)).toMatchObject({
      secure: true,
      port: 465,
    });
  });
});
