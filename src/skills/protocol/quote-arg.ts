/** Values that read the same bare: no whitespace, quotes, backslashes, `#`, or a leading `--`. */
const BARE = /^[A-Za-z0-9_@%+=:,./-]+$/;

/**
 * Quotes `value` so that `tokenize` gives it back exactly, as one word that is never taken for a
 * flag. Plain words stay bare; text with a newline or tab uses double quotes with `\n`/`\t` so
 * the command stays on one line; anything else goes in single quotes (`it's` → `'it'"'"'s'`).
 */
export function quoteArg(value: string): string {
  if (BARE.test(value) && !value.startsWith('--')) return value;
  if (value.includes('\n') || value.includes('\t')) {
    const escaped = value
      .replaceAll('\\', '\\\\')
      .replaceAll('"', '\\"')
      .replaceAll('\n', '\\n')
      .replaceAll('\t', '\\t');
    return `"${escaped}"`;
  }
  return `'${value.replaceAll("'", `'"'"'`)}'`;
}
