import { parseDocument } from 'yaml';

export type ParsedFrontmatter =
  | { status: 'ok'; data: Record<string, unknown>; body: string }
  | { status: 'error'; message: string };

const OPENING = /^\uFEFF?---[ \t]*\r?\n/;
const CLOSING = /^(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/m;

/** Splits `---\n<yaml>\n---\n<body>` and parses the YAML. Never throws; a problem is a message. */
export function parseFrontmatter(text: string): ParsedFrontmatter {
  const opening = OPENING.exec(text);
  if (!opening) {
    return {
      status: 'error',
      message:
        'missing frontmatter: the file must start with a "---" line, then name and description, then "---"',
    };
  }
  const rest = text.slice(opening[0].length);
  const closing = CLOSING.exec(rest);
  if (!closing) return { status: 'error', message: 'frontmatter is never closed: add a "---" line after it' };
  const yamlText = rest.slice(0, closing.index);
  const body = rest.slice(closing.index + closing[0].length);

  const document = parseDocument(yamlText, { prettyErrors: false, uniqueKeys: true });
  const error = document.errors[0];
  if (error) {
    // The parser often notices a problem lines after it began (an unclosed "[" or quote is
    // reported where the frontmatter ends): name the line that opened it when one clearly did.
    const lines = yamlText.split(/\r?\n/);
    const index = suspectLine(lines) ?? yamlText.slice(0, error.pos[0]).split('\n').length - 1;
    // +2: the file's first line is the opening `---`, and lines count from 1.
    return {
      status: 'error',
      message: `unparseable YAML frontmatter (line ${index + 2}: ${JSON.stringify((lines[index] ?? '').trim())}): ${error.message.split('\n')[0]}`,
    };
  }
  const data: unknown = document.toJS();
  if (data === null || data === undefined) return { status: 'ok', data: {}, body };
  if (typeof data !== 'object' || Array.isArray(data)) {
    return { status: 'error', message: 'frontmatter must be YAML "key: value" lines' };
  }
  return { status: 'ok', data: data as Record<string, unknown>, body };
}

const KEY_VALUE = /^([A-Za-z_][\w.-]*):[ \t]*(.*)$/;

/** The index of a frontmatter line that breaks its YAML in a common way, or null. */
function suspectLine(lines: string[]): number | null {
  let previousValue: string | null = null;
  for (const [index, line] of lines.entries()) {
    if (!line.trim() || /^\s*#/.test(line)) continue;
    if (/^\s/.test(line) && previousValue) return index; // indented under a key that already has a value
    const pair = KEY_VALUE.exec(line);
    if (!pair) {
      previousValue = null;
      continue;
    }
    const value = (pair[2] ?? '').trim();
    const unquoted = value.replace(/"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'/g, '');
    if (/^["']/.test(unquoted)) return index; // a quote that never closes
    const opened = (unquoted.match(/[[{]/g) ?? []).length;
    const closed = (unquoted.match(/[\]}]/g) ?? []).length;
    if (/^[[{]/.test(value) && opened > closed) return index; // a "[" or "{" that never closes
    if (/^[^"'[{|>].*:\s/.test(value)) return index; // "key: a: b" needs quotes
    previousValue = value && !/^[|>]/.test(value) ? value : null;
  }
  return null;
}
