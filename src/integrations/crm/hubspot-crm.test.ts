import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeHubspot } from '../../../test/support/fake-hubspot.ts';
import { HubspotCrm } from './hubspot-crm.ts';

describe('HubSpot CRM provider', () => {
  let fake: Awaited<ReturnType<typeof startFakeHubspot>>;
  beforeAll(async () => {
    fake = await startFakeHubspot({ token: 'pat-na1-good-token' });
  });
  afterAll(() => fake.close());
  const crm = (token = 'pat-na1-good-token') =>
    new HubspotCrm({ accessToken: token, basePath: fake.url, reconnect: 'steward connect hubspot' });

  it('creates, finds, updates contacts and keeps notes on them', async () => {
    fake.state.failWith = null;
    const created = await crm().createContact({
      email: 'ana@acme.com',
      firstName: 'Ana',
      lastName: 'Lima',
      company: 'Acme',
    });
    expect(created.email).toBe('ana@acme.com');
    expect((await crm().searchContacts({ text: 'lima', limit: 5 })).map((contact) => contact.id)).toEqual([
      created.id,
    ]);
    expect(await crm().searchContacts({ company: 'Globex', limit: 5 })).toEqual([]);
    const updated = await crm().updateContact(created.id, { jobTitle: 'CTO' });
    expect(updated?.jobTitle).toBe('CTO');
    const note = await crm().addNote({ kind: 'contact', id: created.id }, 'Wants a demo');
    expect(note?.body).toBe('Wants a demo');
    const fetched = await crm().getContact(created.id);
    expect(fetched?.notes.map((entry) => entry.body)).toEqual(['Wants a demo']);
    expect(await crm().getContact('999999')).toBeNull();
    expect(await crm().addNote({ kind: 'deal', id: '999999' }, 'x')).toBeNull();
  });

  it('finds and updates deals', async () => {
    fake.state.failWith = null;
    const id = fake.addDeal({ dealname: 'Acme renewal', dealstage: 'appointmentscheduled', amount: '1000' });
    expect((await crm().searchDeals({ text: 'renewal', limit: 5 }))[0]?.amount).toBe(1000);
    const moved = await crm().updateDeal(id, { stage: 'closedwon', amount: 1200 });
    expect(moved).toMatchObject({ stage: 'closedwon', amount: 1200 });
  });

  it('maps a revoked token, 429, 503 and garbage to provider errors that say what to do', async () => {
    fake.state.failWith = null;
    const revoked = await crm('pat-na1-revoked')
      .searchContacts({ limit: 1 })
      .catch((error: unknown) => error);
    expect(revoked).toMatchObject({ issue: 'auth', infrastructure: false });
    expect(String(revoked)).toContain('steward connect hubspot');
    expect(String(revoked)).not.toContain('pat-na1-revoked');
    for (const [failure, issue] of [
      [429, 'rate_limited'],
      [503, 'unavailable'],
      ['garbage', 'bad_response'],
    ] as const) {
      fake.state.failWith = failure;
      const error = await crm()
        .searchContacts({ limit: 1 })
        .catch((caught: unknown) => caught);
      expect(error, String(failure)).toMatchObject({ issue, infrastructure: true, provider: 'HubSpot' });
      expect(String((error as Error).message)).toContain('HubSpot');
    }
    fake.state.failWith = null;
  });
});
