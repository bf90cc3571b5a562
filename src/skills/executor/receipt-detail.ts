import type { FlagValue } from '../protocol/index.ts';

/** Flags that name what a command acts on, most telling first. */
const MAIN_FLAGS = [
  'title',
  'subject',
  'name',
  'path',
  'to',
  'id',
  'email',
  'content',
  'text',
  'body',
  'query',
  'url',
] as const;

const MAX_DETAIL = 80;

/** Flags never shown in a receipt, whatever they hold. */
const SECRET_FLAG = /pass|secret|token|key|auth|credential|cookie/i;

/** `text` on one line, at most `max` characters (an ellipsis says it was cut). */
export function oneLine(text: string, max = MAX_DETAIL): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1).trimEnd()}…` : flat;
}

/**
 * The identifying detail of a receipt when the handler gave none: the command's main flag
 * (`--title "Alpha plan"` → `Alpha plan`), else its first flag with a value, else empty. A flag
 * named like a secret is never used, and credentials in a URL are dropped.
 */
export function receiptDetailFromFlags(flags: Readonly<Record<string, FlagValue>>): string {
  const text = (value: FlagValue | undefined): string | null => {
    const joined = typeof value === 'string' ? value : Array.isArray(value) ? value.join(', ') : '';
    return joined.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@]+@/gi, '$1').trim() || null;
  };
  for (const name of MAIN_FLAGS) {
    const value = text(flags[name]);
    if (value) return oneLine(value);
  }
  for (const [name, value] of Object.entries(flags)) {
    const found = SECRET_FLAG.test(name) ? null : text(value);
    if (found) return oneLine(found);
  }
  return '';
}
