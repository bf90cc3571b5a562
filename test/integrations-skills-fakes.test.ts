import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { IntegrationSettings } from '../src/integrations/index.ts';
import { describeEachBackend } from './support/db.ts';
import { FakeCaldav } from './support/fake-caldav.ts';
import { FakeGoogle } from './support/fake-google.ts';
import { startFakeHubspot } from './support/fake-hubspot.ts';
import { startFakeImap } from './support/fake-imap.ts';
import { startFakeSmtp } from './support/fake-smtp.ts';
import { integrationExecutor, integrationSettings } from './support/integrations.ts';

/*
 * Every email, calendar and CRM skill through the executor, against each provider's fake (and
 * the local calendar): what the user sees, and what reached the provider.
 */

const stops: Array<() => Promise<void>> = [];
let keyFile = '';
beforeAll(() => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  keyFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'steward-sa-')), 'key.json');
  writeFileSync(
    keyFile,
    JSON.stringify({
      type: 'service_account',
      client_email: 'steward@example.iam.gserviceaccount.com',
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
    }),
  );
});
afterAll(async () => {
  for (const stop of stops) await stop();
});

type Mailbox = {
  settings: Partial<IntegrationSettings>;
  deliver(raw: string): void;
  sent(): Array<{ to: string[]; raw: string }>;
  drafts(): number;
};

const mailboxes: Record<string, () => Promise<Mailbox>> = {
  'IMAP/SMTP': async () => {
    const imap = await startFakeImap({ user: 'me@example.com', password: 'imap-pass-1234' });
    const smtp = await startFakeSmtp({ user: 'me@example.com', password: 'smtp-pass-1234' });
    stops.push(imap.close, smtp.close);
    return {
      settings: { email: { imap_url: imap.url, smtp_url: smtp.url, from: 'Me <me@example.com>' } },
      deliver: (raw) => void imap.add('INBOX', raw),
      sent: () => smtp.received,
      drafts: () => imap.mailboxes.get('Drafts')!.messages.length,
    };
  },
  Gmail: async () => {
    const google = await new FakeGoogle().start();
    stops.push(() => google.stop());
    return {
      settings: {
        google: { application_credentials: keyFile, impersonate: 'me@example.com', api_url: google.url },
      },
      deliver: (raw) => void google.deliver(raw),
      sent: () => google.sent,
      drafts: () => google.drafts.length,
    };
  },
};

const calendars: Record<string, () => Promise<Partial<IntegrationSettings>>> = {
  local: async () => ({}),
  'Google Calendar': async () => {
    const google = await new FakeGoogle().start();
    stops.push(() => google.stop());
    return {
      google: { application_credentials: keyFile, impersonate: 'me@example.com', api_url: google.url },
    };
  },
  CalDAV: async () => {
    const caldav = await new FakeCaldav({ user: 'me', password: 'dav-pass-1234' }).start();
    stops.push(() => caldav.stop());
    return { caldav: { url: caldav.url.replace('http://', 'http://me:dav-pass-1234@') } };
  },
};

describeEachBackend('email skills against each provider', (getDb) => {
  for (const [name, make] of Object.entries(mailboxes)) {
    it(`${name}: search, read, reply, draft, label and archive`, async () => {
      const mailbox = await make();
      const { run } = integrationExecutor(getDb(), integrationSettings(mailbox.settings));
      mailbox.deliver(
        'From: Ana <ana@example.com>\nTo: me@example.com\nCc: cy@example.com\nSubject: Dinner\nMessage-ID: <dinner@example.com>\n\nDinner on Friday?',
      );
      const search = await run('email.search --from ana --limit 5');
      expect(search.status, search.content).toBe('ok');
      const id = /\[([^\]]+)\] \d{4}-/.exec(search.content)![1]!;
      expect(search.content).toContain('Ana <ana@example.com> · Dinner · unread');
      expect(search.content).not.toContain('there may be more');
      // As many as --limit came back: the result says the list may be cut, never that it is all.
      const capped = await run('email.search --from ana --limit 1');
      expect(capped.content).toContain(
        'Showing the first 1: there may be more. Narrow the search, or raise --limit (at most 50).',
      );
      expect(capped.metadata).toMatchObject({ limitReached: true });
      const read = await run(`email.read --id ${id}`);
      expect(read.content).toContain(`<external source="email:${id}">`);
      expect(read.content).toContain('Dinner on Friday?');

      const replied = await run(`email.reply --id ${id} --body "Yes, 8pm" --all`);
      expect(replied.status, replied.content).toBe('ok');
      const reply = mailbox.sent().at(-1)!;
      expect(reply.to.sort()).toEqual(['ana@example.com', 'cy@example.com']);
      expect(reply.raw).toContain('Subject: Re: Dinner');
      expect(reply.raw).toContain('In-Reply-To: <dinner@example.com>');
      expect((await run(`email.reply --id ${id} --body "Maybe" --draft`)).content).toContain(
        'Nothing was sent',
      );
      const draft = await run('email.draft --to bob@example.com --subject Later --body "Draft only"');
      expect(draft.status, draft.content).toBe('ok');
      expect(mailbox.drafts()).toBe(2);
      expect(mailbox.sent()).toHaveLength(1);

      const labelled = await run(`email.label --id ${id} --add social`);
      expect(labelled.content).toContain('social');
      expect((await run('email.search --label social')).content).toContain(`[${id}]`);
      expect((await run(`email.archive --id ${id}`)).content).toContain('nothing deleted');
      expect((await run('email.search')).content).toContain('No messages match');

      mailbox.deliver(
        [
          'From: Bo <bo@example.com>',
          'To: me@example.com',
          'Subject: Minutes',
          'MIME-Version: 1.0',
          'Content-Type: multipart/mixed; boundary="b1"',
          '',
          '--b1',
          'Content-Type: text/plain; charset=utf-8',
          '',
          'Minutes attached.',
          '--b1',
          'Content-Type: text/markdown; name="../../minutes.md"',
          'Content-Disposition: attachment; filename="../../minutes.md"',
          'Content-Transfer-Encoding: base64',
          '',
          Buffer.from('# Minutes\n\nShip the harbour report.').toString('base64'),
          '--b1--',
          '',
        ].join('\n'),
      );
      const minutes = /\[([^\]]+)\] \d{4}-[^\n]*Minutes/.exec(
        (await run('email.search --from bo')).content,
      )![1]!;
      expect((await run(`email.read --id ${minutes}`)).content).toMatch(
        /Attachments: \.\.\/\.\.\/minutes\.md \(text\/markdown, \d+ B\)/,
      );
      const saved = await run(`email.save_attachments --id ${minutes}`);
      expect(saved.status, saved.content).toBe('ok');
      expect(saved.content).toContain('email-attachments/minutes.md');
      const file = await run('files.read --path email-attachments/minutes.md');
      expect(file.content).toContain('Ship the harbour report.');
      const again = await run(
        `email.save_attachments --id ${minutes} --name minutes.md --folder email-attachments`,
      );
      expect(again.status, again.content).toBe('ok');
      expect((await run('files.versions --path email-attachments/minutes.md')).content).toContain('v2');
      expect((await run(`email.save_attachments --id ${minutes} --name nope.pdf`)).content).toContain(
        'it has: ../../minutes.md',
      );

      const unknown = await run('email.read --id nosuchmessage1');
      expect(unknown.status).toBe('error');
      expect(unknown.content).toContain('No message with id nosuchmessage1');
      const badAddress = await run('email.send --to "not an address" --subject x --body y');
      expect(badAddress.content).toContain('is not an email address');
    });
  }
});

describeEachBackend('calendar skills against each provider', (getDb) => {
  for (const [name, make] of Object.entries(calendars)) {
    it(`${name}: create, get (fenced), update keeping the duration, list, free and delete`, async () => {
      const { run } = integrationExecutor(getDb(), integrationSettings(await make()));
      const as = (command: string) => run(command, `cal-${name.replace(/\W/g, '')}`, 'Europe/Paris');
      const created = await as(
        'calendar.create --title "Design review" --start 2026-03-02T10:00 --end 2026-03-02T11:00 --description "Bring the mockups" --attendees ana@example.com',
      );
      expect(created.status, created.content).toBe('ok');
      expect(created.content).toContain('Mon 2026-03-02 10:00–11:00');
      const id = /\[([^\]]+)\] Design review/.exec(created.content)![1]!;
      const got = await as(`calendar.get --id ${id}`);
      expect(got.content).toContain(`<external source="calendar:${id}">`);
      expect(got.content).toContain('Bring the mockups');
      expect(got.content).toContain('Attendees: ana@example.com');
      const moved = await as(`calendar.update --id ${id} --start 2026-03-02T14:00 --title "Design review 2"`);
      expect(moved.status, moved.content).toBe('ok');
      expect(moved.content).toContain('14:00–15:00');
      const listed = await as('calendar.list --from 2026-03-02 --to 2026-03-02');
      expect(listed.content).toMatch(/Mon 2026-03-02 14:00–15:00 \[[^\]]+\] Design review 2/);
      const free = await as('calendar.free --from 2026-03-02 --duration 60');
      expect(free.content).toContain('09:00–14:00');
      expect(free.content).toContain('15:00–18:00');
      expect((await as(`calendar.delete --id ${id}`)).status).toBe('ok');
      expect((await as('calendar.list --from 2026-03-02 --to 2026-03-02')).content).toContain('No events');
      const gone = await as(`calendar.get --id ${id}`);
      expect(gone.status).toBe('error');
      expect(gone.content).toContain(`No event with id ${id}`);
    });
  }
});

describeEachBackend('crm skills against HubSpot', (getDb) => {
  it('updates contacts, finds and moves deals', async () => {
    const hubspot = await startFakeHubspot({ token: 'pat-na1-skills-token' });
    stops.push(hubspot.close);
    const { run } = integrationExecutor(
      getDb(),
      integrationSettings({ hubspot: { access_token: 'pat-na1-skills-token', base_url: hubspot.url } }),
    );
    const created = await run('crm.contact_create --email bo@globex.example --first-name Bo');
    const contact = /\[(\d+)\]/.exec(created.content)![1]!;
    const updated = await run(`crm.contact_update --id ${contact} --job-title CFO --company Globex`);
    expect(updated.status, updated.content).toBe('ok');
    expect(hubspot.contacts.get(contact)?.properties).toMatchObject({ jobtitle: 'CFO', company: 'Globex' });
    const deal = hubspot.addDeal({
      dealname: 'Globex pilot',
      dealstage: 'appointmentscheduled',
      amount: '500',
    });
    const deals = await run('crm.deals_search --query pilot');
    expect(deals.content).toContain(`[${deal}]`);
    expect(deals.content).toContain('Globex pilot');
    const moved = await run(
      `crm.deal_update --id ${deal} --stage closedwon --amount 750 --close-date 2026-04-30`,
    );
    expect(moved.status, moved.content).toBe('ok');
    expect(hubspot.deals.get(deal)?.properties).toMatchObject({ dealstage: 'closedwon', amount: '750' });
    expect((await run('crm.deal_update --id 999999 --stage closedlost')).content).toContain('999999');
  });
});
