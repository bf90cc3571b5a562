import { expect, it } from 'vitest';
import type { CrmProvider } from '../../../src/integrations/index.ts';

/** What a contract run needs around a CRM: the provider, and a way to add a deal as the CRM's users would. */
export type CrmFixture = {
  provider: CrmProvider;
  addDeal(deal: { name: string; stage: string; amount: number }): Promise<string> | string;
};

/** The behaviour every CrmProvider must have; `make` returns a provider over an empty CRM. */
export function crmProviderContract(make: () => Promise<CrmFixture>): void {
  it('creates, finds and updates contacts; unknown ids are null', async () => {
    const { provider } = await make();
    const created = await provider.createContact({
      email: 'ana@acme.example',
      firstName: 'Ana',
      lastName: 'Lima',
      company: 'Acme',
    });
    expect(created).toMatchObject({ email: 'ana@acme.example', firstName: 'Ana', company: 'Acme' });
    await provider.createContact({ email: 'bo@globex.example', firstName: 'Bo', company: 'Globex' });
    const byName = await provider.searchContacts({ text: 'lima', limit: 5 });
    expect(byName.map((contact) => contact.id)).toEqual([created.id]);
    const byEmail = await provider.searchContacts({ email: 'bo@globex.example', limit: 5 });
    expect(byEmail.map((contact) => contact.firstName)).toEqual(['Bo']);
    expect(await provider.searchContacts({ company: 'Initech', limit: 5 })).toEqual([]);
    expect((await provider.searchContacts({ limit: 1 })).length).toBe(1);
    const updated = await provider.updateContact(created.id, { jobTitle: 'CTO', phone: '+33 1 23 45 67 89' });
    expect(updated).toMatchObject({ id: created.id, jobTitle: 'CTO', email: 'ana@acme.example' });
    expect((await provider.getContact(created.id))?.contact.jobTitle).toBe('CTO');
    expect(await provider.getContact('987654321')).toBeNull();
    expect(await provider.updateContact('987654321', { jobTitle: 'x' })).toBeNull();
  });

  it('keeps notes on contacts and deals, newest first; a note on an unknown record is null', async () => {
    const { provider, addDeal } = await make();
    const contact = await provider.createContact({ email: 'cy@acme.example', firstName: 'Cy' });
    const first = await provider.addNote({ kind: 'contact', id: contact.id }, 'Met at the fair');
    expect(first?.body).toBe('Met at the fair');
    await provider.addNote({ kind: 'contact', id: contact.id }, 'Wants a demo');
    const fetched = await provider.getContact(contact.id);
    expect(fetched?.notes.map((note) => note.body).sort()).toEqual(['Met at the fair', 'Wants a demo']);
    const deal = await addDeal({ name: 'Acme renewal', stage: 'appointmentscheduled', amount: 1000 });
    expect((await provider.addNote({ kind: 'deal', id: deal }, 'Budget approved'))?.body).toBe(
      'Budget approved',
    );
    expect(await provider.addNote({ kind: 'contact', id: '987654321' }, 'x')).toBeNull();
    expect(await provider.addNote({ kind: 'deal', id: '987654321' }, 'x')).toBeNull();
  });

  it('finds deals by words and stage and updates them; an unknown deal is null', async () => {
    const { provider, addDeal } = await make();
    const renewal = await addDeal({ name: 'Acme renewal', stage: 'appointmentscheduled', amount: 1000 });
    await addDeal({ name: 'Globex pilot', stage: 'closedwon', amount: 250 });
    const found = await provider.searchDeals({ text: 'renewal', limit: 5 });
    expect(found.map((deal) => deal.id)).toEqual([renewal]);
    expect(found[0]).toMatchObject({ name: 'Acme renewal', amount: 1000, stage: 'appointmentscheduled' });
    expect((await provider.searchDeals({ stage: 'closedwon', limit: 5 })).map((deal) => deal.name)).toEqual([
      'Globex pilot',
    ]);
    const moved = await provider.updateDeal(renewal, {
      stage: 'closedwon',
      amount: 1200,
      closeDate: new Date('2026-03-31T00:00:00Z'),
    });
    expect(moved).toMatchObject({ id: renewal, stage: 'closedwon', amount: 1200 });
    expect(moved?.closeDate?.toISOString().slice(0, 10)).toBe('2026-03-31');
    expect(await provider.updateDeal('987654321', { stage: 'closedlost' })).toBeNull();
  });
}
