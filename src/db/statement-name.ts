import { createHash } from 'node:crypto';

/** SQL texts seen before this many distinct ones are forgotten (names are recomputed, not lost). */
const MAX_REMEMBERED = 5_000;
const statementNames = new Map<string, string>();

/** A stable name for a prepared statement: the same text always gets the same name. */
export function statementName(text: string): string {
  let name = statementNames.get(text);
  if (!name) {
    name = `s_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;
    if (statementNames.size >= MAX_REMEMBERED) statementNames.clear();
    statementNames.set(text, name);
  }
  return name;
}
