import addressparser from 'nodemailer/lib/addressparser/index.js';
import type { EmailAddress } from './email-types.ts';

/** What an address must look like once parsed: a local part, `@`, and a dotted domain (or localhost). */
const ADDRESS = /^[^\s<>@",;]+@[^\s<>@",;]+\.[^\s<>@",;]+$|^[^\s<>@",;]+@localhost$/;

/** Every address of a header-style list (`Ana <a@x>, "Doe, Jo" <j@y>`), by nodemailer's parser. */
function parseList(input: string): EmailAddress[] | null {
  const parsed = addressparser(input, { flatten: true });
  if (parsed.length === 0 || parsed.some((entry) => !ADDRESS.test(entry.address))) return null;
  return parsed.map((entry) => ({ name: entry.name.trim() || null, address: entry.address }));
}

/** Reads `addr` or `Name <addr>` (the name may be quoted). Null when it is neither. */
export function parseAddress(input: string): EmailAddress | null {
  const list = parseList(input.trim());
  return list?.length === 1 ? list[0]! : null;
}

/** `Name <addr>` or `addr`. */
export function formatAddress(address: EmailAddress | null): string {
  if (!address) return '(unknown sender)';
  return address.name ? `${address.name} <${address.address}>` : address.address;
}

/** Each address of a `--to a@x b@y` list, or the first one that is not an address. */
export function parseAddressList(
  inputs: readonly string[],
): { ok: true; addresses: string[] } | { ok: false; bad: string } {
  const addresses: string[] = [];
  for (const input of inputs) {
    if (!input.trim()) continue;
    const parsed = parseList(input.replaceAll(';', ','));
    if (!parsed) {
      const bad = input.split(/[,;]/).find((part) => part.trim() && !parseList(part)) ?? input;
      return { ok: false, bad: bad.trim() };
    }
    for (const { name, address } of parsed) {
      // A name with a comma or angle bracket is quoted, so the header reads back as one address.
      const quoted = name && /[",;<>@()]/.test(name) ? `"${name.replace(/["\\]/g, '\\$&')}"` : name;
      addresses.push(quoted ? `${quoted} <${address}>` : address);
    }
  }
  return { ok: true, addresses };
}
