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

/** `text` on one line, at most `max` characters (an ellipsis says it was cut). */
export function oneLine(text: string, max = MAX_DETAIL): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1).trimEnd()}…` : flat;
}

/**
 * The identifying detail of a receipt when the handler gave none: the command's main flag
 * (`--title "Alpha plan"` → `Alpha plan`), else its first flag with a value, else empty.
 */
export function receiptDetailFromFlags(flags: Readonly<Record<string, FlagValue>>): string {
  const text = (value: FlagValue | undefined): string | null => {
    if (typeof value === 'string') return value.trim() || null;
    if (Array.isArray(value)) return value.join(', ').trim() || null;
    return null;
  };
  for (const name of MAIN_FLAGS) {
    const value = text(flags[name]);
    if (value) return oneLine(value);
  }
  for (const value of Object.values(flags)) {
    const found = text(value);
    if (found) return oneLine(found);
  }
  return '';
}
