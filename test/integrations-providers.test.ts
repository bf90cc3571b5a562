import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/index.ts';
import {
  type CalendarProvider,
  type CrmProvider,
  type EmailProvider,
  type IntegrationSettings,
  Integrations,
} from '../src/integrations/index.ts';
import { calendarProviderContract } from './support/contracts/calendar-contract.ts';
import { crmProviderContract } from './support/contracts/crm-contract.ts';
import { emailProviderContract } from './support/contracts/email-contract.ts';
import { createTestDatabase, type TestDatabase } from './support/db.ts';
import { FakeCaldav } from './support/fake-caldav.ts';
import { FakeGoogle } from './support/fake-google.ts';
import { startFakeHubspot } from './support/fake-hubspot.ts';
import { integrationSettings } from './support/integrations.ts';

/*
 * The provider contracts against every remote implementation, each reached the way the runtime
 * reaches it: through Integrations, from the owner's settings (GOOGLE_APPLICATION_CREDENTIALS +
 * GOOGLE_IMPERSONATE + GOOGLE_API_URL, CALDAV_URL, HUBSPOT_ACCESS_TOKEN + HUBSPOT_BASE_URL), to
 * fakes that speak each API over HTTP. IMAP/SMTP and the local calendar run the same suites
 * beside their code (src/integrations/…).
 */

let test: TestDatabase;
let keyFile = '';
const servers: Array<{ stop(): Promise<void> }> = [];

beforeAll(async () => {
  test = await createTestDatabase('pglite');
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
  for (const server of servers) await server.stop();
  await test?.drop();
});

function integrations(settings: Partial<IntegrationSettings>): Integrations {
  const resolved = integrationSettings(settings);
  return new Integrations({ database: test.database as Database, config: () => resolved, timeoutMs: 5_000 });
}

async function fakeGoogle(): Promise<FakeGoogle> {
  const fake = await new FakeGoogle().start();
  servers.push(fake);
  return fake;
}

const googleSettings = (fake: FakeGoogle): Partial<IntegrationSettings> => ({
  google: { application_credentials: keyFile, impersonate: 'owner@example.com', api_url: fake.url },
});

async function ownerEmail(settings: Partial<IntegrationSettings>): Promise<EmailProvider> {
  const found = await integrations(settings).email('local');
  if (!found.ok) throw new Error(found.reason);
  return found.provider;
}

async function ownerCalendar(settings: Partial<IntegrationSettings>): Promise<CalendarProvider> {
  const found = await integrations(settings).calendar('local');
  if (!found.ok) throw new Error(found.reason);
  return found.provider;
}

async function ownerCrm(settings: Partial<IntegrationSettings>): Promise<CrmProvider> {
  const found = await integrations(settings).crm('local');
  if (!found.ok) throw new Error(found.reason);
  return found.provider;
}

describe('Gmail (service account, GOOGLE_API_URL)', () => {
  emailProviderContract(async () => {
    const fake = await fakeGoogle();
    const provider = await ownerEmail(googleSettings(fake));
    expect(provider.name).toBe('Gmail');
    return {
      provider,
      deliver: (raw, options) => void fake.deliver(raw, options),
      sent: () => fake.sent.map((mail) => ({ to: mail.to, raw: mail.raw })),
      draftCount: () => fake.drafts.length,
    };
  });

  it('gets its token from the token endpoint under GOOGLE_API_URL with the service account grant', async () => {
    const fake = await fakeGoogle();
    await (await ownerEmail(googleSettings(fake))).search({ limit: 1 });
    expect(fake.tokenGrants).toEqual(['urn:ietf:params:oauth:grant-type:jwt-bearer']);
    expect(fake.requests[0]?.path).toBe('/gmail/v1/users/me/messages');
  });

  it('sends a reply in the original thread', async () => {
    const fake = await fakeGoogle();
    const gmail = await ownerEmail(googleSettings(fake));
    fake.deliver(
      'From: ana@example.com\nTo: owner@example.com\nSubject: Plans\nMessage-ID: <p1@example.com>\n\nDinner?',
    );
    const [original] = await gmail.search({ limit: 1 });
    const read = await gmail.read(original!.id);
    await gmail.send({
      to: ['ana@example.com'],
      subject: 'Re: Plans',
      text: 'Yes',
      threadId: read!.threadId,
    });
    expect(fake.sent[0]?.threadId).toBe(read!.threadId);
  });
});

describe('Google Calendar (service account, GOOGLE_API_URL)', () => {
  calendarProviderContract(async () => {
    const provider = await ownerCalendar(googleSettings(await fakeGoogle()));
    expect(provider.name).toBe('Google Calendar');
    return provider;
  });
});

describe('CalDAV (CALDAV_URL)', () => {
  calendarProviderContract(async () => {
    const fake = await new FakeCaldav({ user: 'me@example.com', password: 'app-pass-1234' }).start();
    servers.push(fake);
    const url = new URL(fake.url);
    url.username = encodeURIComponent('me@example.com');
    url.password = 'app-pass-1234';
    const provider = await ownerCalendar({ caldav: { url: url.toString() } });
    expect(provider.name).toBe('CalDAV');
    return provider;
  });

  it('writes events into the event calendar, not the tasks-only collection', async () => {
    const fake = await new FakeCaldav({ user: 'me', password: 'pw-123456' }).start();
    servers.push(fake);
    const calendar = await ownerCalendar({
      caldav: { url: fake.url.replace('http://', 'http://me:pw-123456@') },
    });
    const event = await calendar.create({
      title: 'Dentist',
      start: new Date('2026-06-01T08:00:00Z'),
      end: new Date('2026-06-01T09:00:00Z'),
      timezone: 'UTC',
    });
    expect([...fake.objects.keys()]).toEqual([`${fake.calendarPath}${event.id}`]);
  });
});

describe('HubSpot (HUBSPOT_ACCESS_TOKEN, HUBSPOT_BASE_URL)', () => {
  crmProviderContract(async () => {
    const fake = await startFakeHubspot({ token: 'pat-na1-contract-token' });
    servers.push({ stop: () => fake.close() });
    const provider = await ownerCrm({
      hubspot: { access_token: 'pat-na1-contract-token', base_url: fake.url },
    });
    expect(provider.name).toBe('HubSpot');
    return {
      provider,
      addDeal: (deal) =>
        fake.addDeal({ dealname: deal.name, dealstage: deal.stage, amount: String(deal.amount) }),
    };
  });
});

describe('remote providers that fail', () => {
  it('Gmail and Google Calendar: revoked access, 429, 5xx and garbage become errors that name the provider and what to do', async () => {
    const fake = await fakeGoogle();
    const gmail = await ownerEmail(googleSettings(fake));
    const calendar = await ownerCalendar(googleSettings(fake));
    const range = { from: new Date('2026-01-01Z'), to: new Date('2026-01-02Z') };
    const cases = [
      [401, 'auth', 'GOOGLE_APPLICATION_CREDENTIALS'],
      [429, 'rate_limited', 'HTTP 429'],
      [503, 'unavailable', 'unavailable'],
      ['garbage', 'bad_response', 'could not read'],
    ] as const;
    for (const [failure, issue, says] of cases) {
      fake.failNext(failure);
      const mailError = await gmail.search({ limit: 1 }).catch((error: unknown) => error);
      expect(mailError, `Gmail ${failure}`).toMatchObject({ issue, provider: 'Gmail' });
      expect(String((mailError as Error).message)).toContain(says);
      fake.failNext(failure);
      const calendarError = await calendar.list(range).catch((error: unknown) => error);
      expect(calendarError, `Calendar ${failure}`).toMatchObject({ issue, provider: 'Google Calendar' });
    }
    expect(await gmail.search({ limit: 1 })).toEqual([]);
  });

  it('Gmail: access revoked at the token endpoint tells the user how to reconnect', async () => {
    const fake = await fakeGoogle();
    fake.revoked = true;
    const failure = await (await ownerEmail(googleSettings(fake)))
      .search({ limit: 1 })
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({ issue: 'auth', provider: 'Gmail' });
    expect(String((failure as Error).message)).toContain('steward connect google');
    expect(fake.requests).toEqual([]);
  });

  it('CalDAV: a wrong password asks to reconnect, a server that is down is unavailable', async () => {
    const fake = await new FakeCaldav({ user: 'me', password: 'right-pass' }).start();
    servers.push(fake);
    const range = { from: new Date('2026-01-01Z'), to: new Date('2026-01-02Z') };
    const wrong = await ownerCalendar({
      caldav: { url: fake.url.replace('http://', 'http://me:wrong-pass@') },
    });
    const refused = await wrong.list(range).catch((error: unknown) => error);
    expect(refused).toMatchObject({ issue: 'auth' });
    expect(String((refused as Error).message)).toContain('CALDAV_URL');
    expect(String((refused as Error).message)).not.toContain('wrong-pass');
    const calendar = await ownerCalendar({
      caldav: { url: fake.url.replace('http://', 'http://me:right-pass@') },
    });
    expect(await calendar.list(range)).toEqual([]);
    fake.failWith = 503;
    const down = await calendar.get('x.ics').catch((error: unknown) => error);
    expect(down).toMatchObject({ issue: 'unavailable', infrastructure: true });
    fake.failWith = null;
  });
});

describe('IMAP/SMTP from the owner settings (EMAIL_IMAP_URL, EMAIL_SMTP_URL, EMAIL_FROM)', () => {
  it('sends From: EMAIL_FROM as `addr` or `Name <addr>`, or the IMAP user when it is unset', async () => {
    const { startFakeImap } = await import('./support/fake-imap.ts');
    const { startFakeSmtp } = await import('./support/fake-smtp.ts');
    const imap = await startFakeImap({ user: 'me@example.com', password: 'imap-pass-1234' });
    const smtp = await startFakeSmtp({ user: 'me@example.com', password: 'smtp-pass-1234' });
    servers.push({ stop: () => imap.close() }, { stop: () => smtp.close() });
    for (const [from, header] of [
      ['me@example.com', 'From: me@example.com'],
      ['Me Myself <me@example.com>', 'From: Me Myself <me@example.com>'],
      [undefined, 'From: me@example.com'],
    ] as const) {
      const mailbox = await ownerEmail({ email: { imap_url: imap.url, smtp_url: smtp.url, from } });
      expect(mailbox.address).toBe('me@example.com');
      await mailbox.send({ to: ['bob@example.com'], subject: `From ${from}`, text: 'hi' });
      await mailbox.close();
      expect(smtp.received.at(-1)?.raw, String(from)).toContain(`${header}\r\n`);
    }
  });
});
