import { ImapFlow } from 'imapflow';
import { migrate, openPglite } from '../src/db/index.ts';
import { startFakeImap } from '../test/support/fake-imap.ts';
import { startFakeSmtp } from '../test/support/fake-smtp.ts';
import { integrationExecutor, integrationSettings } from '../test/support/integrations.ts';
import type { BenchSection } from './lib.ts';
import { ms, percentile, sample } from './lib.ts';

/**
 * email.search through the whole pipeline (executor, provider, formatting, execution row)
 * against the fake IMAP server, compared with the bare imapflow search + fetch it wraps.
 */
export default async function emailBench(): Promise<BenchSection> {
  const imap = await startFakeImap({ user: 'me@example.com', password: 'bench-pass' });
  const smtp = await startFakeSmtp({ user: 'me@example.com', password: 'bench-pass' });
  for (let index = 0; index < 200; index++) {
    imap.add(
      'INBOX',
      `From: sender${index % 20}@example.com\nTo: me@example.com\nSubject: Message ${index}\n\nBody ${index}\n`,
      {
        flags: index % 3 === 0 ? [] : ['\\Seen'],
      },
    );
  }
  const database = await openPglite(null);
  await migrate(database);
  const settings = integrationSettings({
    email: { imap_url: imap.url, smtp_url: smtp.url, from: 'me@example.com' },
  });
  const { run } = integrationExecutor(database, settings);
  await run('email.search --limit 10');
  const skill = await sample(40, () => run('email.search --unread --limit 10'));
  const bare = await sample(40, async () => {
    const client = new ImapFlow({
      host: '127.0.0.1',
      port: imap.port,
      secure: false,
      doSTARTTLS: false,
      auth: { user: 'me@example.com', pass: 'bench-pass' },
      logger: false,
    });
    await client.connect();
    const lock = await client.getMailboxLock('INBOX', { readOnly: true });
    const uids = (await client.search({ seen: false }, { uid: true })) || [];
    for await (const _ of client.fetch(
      uids.slice(-10),
      { uid: true, flags: true, envelope: true },
      { uid: true },
    )) {
      // drain
    }
    lock.release();
    await client.logout();
  });
  await database.close();
  await imap.close();
  await smtp.close();
  const row = (label: string, samples: number[]) => [
    label,
    ms(percentile(samples, 50)),
    ms(percentile(samples, 95)),
  ];
  return {
    title: 'email.search overhead',
    description:
      'email.search --unread --limit 10 over 200 messages on the fake IMAP server (40 runs, embedded database), against bare imapflow doing the same search and fetch.',
    columns: ['path', 'p50', 'p95'],
    rows: [
      row('email.search (executor → IMAP provider)', skill),
      row('bare imapflow connect + search + fetch', bare),
    ],
  };
}
