import {
  type CrmContact,
  type CrmDeal,
  type CrmNote,
  htmlToReadableText,
} from '../../../integrations/index.ts';
import { fenceExternal } from '../../external.ts';

export function contactLine(contact: CrmContact): string {
  const name = [contact.firstName, contact.lastName].filter(Boolean).join(' ') || '(no name)';
  const parts = [`[${contact.id}]`, name];
  if (contact.email) parts.push(`<${contact.email}>`);
  if (contact.company) parts.push(`· ${contact.company}`);
  if (contact.jobTitle) parts.push(`· ${contact.jobTitle}`);
  if (contact.phone) parts.push(`· ${contact.phone}`);
  return parts.join(' ');
}

export function dealLine(deal: CrmDeal): string {
  const parts = [`[${deal.id}]`, deal.name];
  if (deal.stage) parts.push(`· stage ${deal.stage}`);
  if (deal.amount !== null) parts.push(`· amount ${deal.amount}`);
  if (deal.closeDate) parts.push(`· closes ${deal.closeDate.toISOString().slice(0, 10)}`);
  return parts.join(' ');
}

/** Notes were written by anyone with CRM access: each is fenced. */
export function notesBlock(notes: readonly CrmNote[]): string {
  if (notes.length === 0) return 'Notes: (none)';
  const blocks = notes.map(
    (note) =>
      `${note.createdAt ? note.createdAt.toISOString().slice(0, 16).replace('T', ' ') : ''} [${note.id}]\n${fenceExternal(`hubspot:note:${note.id}`, htmlToReadableText(note.body))}`,
  );
  return `Notes (newest first):\n${blocks.join('\n')}`;
}
