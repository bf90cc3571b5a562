import type { EmailAddress } from './email-types.ts';

const ADDRESS = /^[^\s<>@",;]+@[^\s<>@",;]+\.[^\s<>@",;]+$|^[^\s<>@",;]+@localhost$/;

/** Reads `addr` or `Name <addr>` (the name may be quoted). Null when it is neither. */
export function parseAddress(input: string): EmailAddress | null {
  const text = input.trim();
  const named = /^(.*?)\s*<([^<>]+)>$/.exec(text);
  if (named) {
    const address = named[2]!.trim();
    if (!ADDRESS.test(address)) return null;
    const name = named[1]!
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .trim();
    return { name: name || null, address };
  }
  return ADDRESS.test(text) ? { name: null, address: text } : null;
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
    for (const part of input.split(/[,;]/)) {
      if (!part.trim()) continue;
      const parsed = parseAddress(part);
      if (!parsed) return { ok: false, bad: part.trim() };
      addresses.push(parsed.name ? `${parsed.name} <${parsed.address}>` : parsed.address);
    }
  }
  return { ok: true, addresses };
}
