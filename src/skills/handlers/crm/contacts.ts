import { z } from 'zod';
import type { ContactFields } from '../../../integrations/index.ts';
import { fenceExternal } from '../../external.ts';
import { flag } from '../../flags.ts';
import { defineHandler, fail, ok } from '../../types.ts';
import { limitNote } from '../limit-note.ts';
import { integrationsOf, withProvider } from '../provider-call.ts';
import { contactLine, contactReceipt, notesBlock } from './format.ts';

const ADDRESS = /^[^\s<>@",;]+@[^\s<>@",;]+$/;

const fieldFlags = {
  email: flag.string().optional(),
  first_name: flag.string().optional(),
  last_name: flag.string().optional(),
  company: flag.string().optional(),
  phone: flag.string().optional(),
  job_title: flag.string().optional(),
};

function fields(flags: {
  email?: string;
  first_name?: string;
  last_name?: string;
  company?: string;
  phone?: string;
  job_title?: string;
}): ContactFields {
  const out: ContactFields = {};
  if (flags.email !== undefined) out.email = flags.email;
  if (flags.first_name !== undefined) out.firstName = flags.first_name;
  if (flags.last_name !== undefined) out.lastName = flags.last_name;
  if (flags.company !== undefined) out.company = flags.company;
  if (flags.phone !== undefined) out.phone = flags.phone;
  if (flags.job_title !== undefined) out.jobTitle = flags.job_title;
  return out;
}

export const searchContactsHandler = defineHandler({
  name: 'crm.contacts_search',
  flags: z
    .object({
      query: flag.string().optional(),
      email: flag.string().optional(),
      company: flag.string().optional(),
      limit: flag.int({ min: 1, max: 50 }).default(10),
    })
    .strict(),
  async execute(flags, ctx) {
    return withProvider(integrationsOf(ctx).crm(ctx.user.id), async (crm) => {
      const contacts = await crm.searchContacts(
        { text: flags.query, email: flags.email, company: flags.company, limit: flags.limit },
        ctx.signal,
      );
      const metadata = { ids: contacts.map((contact) => contact.id), count: contacts.length };
      if (contacts.length === 0) return ok(`No contacts match in ${crm.name}.`, { metadata });
      return ok(
        `${contacts.length} contact${contacts.length === 1 ? '' : 's'} in ${crm.name}:\n${fenceExternal('hubspot:contacts', contacts.map(contactLine).join('\n'))}${limitNote(contacts.length, flags.limit, 50)}`,
        { metadata: { ...metadata, limitReached: contacts.length >= flags.limit } },
      );
    });
  },
});

export const getContactHandler = defineHandler({
  name: 'crm.contact_get',
  flags: z.object({ id: flag.string() }).strict(),
  async execute(flags, ctx) {
    return withProvider(integrationsOf(ctx).crm(ctx.user.id), async (crm) => {
      const found = await crm.getContact(flags.id, ctx.signal);
      if (!found)
        return fail(`No contact with id ${flags.id} in ${crm.name}. Find ids with crm.contacts_search.`);
      return ok(
        `${fenceExternal(`hubspot:contact:${found.contact.id}`, contactLine(found.contact))}\n${notesBlock(found.notes)}`,
        {
          metadata: { id: found.contact.id, contact: found.contact, notes: found.notes.length },
        },
      );
    });
  },
});

export const createContactHandler = defineHandler({
  name: 'crm.contact_create',
  flags: z.object(fieldFlags).strict(),
  async execute(flags, ctx) {
    if (!flags.email && !flags.first_name && !flags.last_name)
      return fail('Give at least --email, --first-name or --last-name.');
    if (flags.email && !ADDRESS.test(flags.email))
      return fail(`--email: "${flags.email}" is not an email address.`);
    return withProvider(integrationsOf(ctx).crm(ctx.user.id), async (crm) => {
      const contact = await crm.createContact(fields(flags), ctx.signal);
      return ok(`Created in ${crm.name}: ${contactLine(contact)}`, {
        sideEffects: [`crm contact ${contact.id} created`],
        metadata: { id: contact.id },
        receipt: contactReceipt(contact),
      });
    });
  },
});

export const updateContactHandler = defineHandler({
  name: 'crm.contact_update',
  flags: z.object({ id: flag.string(), ...fieldFlags }).strict(),
  async execute(flags, ctx) {
    const changes = fields(flags);
    if (Object.keys(changes).length === 0)
      return fail(
        'Nothing to change: give --email, --first-name, --last-name, --company, --phone or --job-title.',
      );
    if (flags.email && !ADDRESS.test(flags.email))
      return fail(`--email: "${flags.email}" is not an email address.`);
    return withProvider(integrationsOf(ctx).crm(ctx.user.id), async (crm) => {
      const contact = await crm.updateContact(flags.id, changes, ctx.signal);
      if (!contact)
        return fail(`No contact with id ${flags.id} in ${crm.name}. Find ids with crm.contacts_search.`);
      return ok(`Updated in ${crm.name}: ${contactLine(contact)}`, {
        sideEffects: [`crm contact ${contact.id} updated`],
        metadata: { id: contact.id },
        receipt: contactReceipt(contact),
      });
    });
  },
});
