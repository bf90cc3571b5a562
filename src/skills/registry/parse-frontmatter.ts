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
    // +2: the file's first line is the opening `---`, and lines count from 1.
    const line = yamlText.slice(0, error.pos[0]).split('\n').length + 1;
    return {
      status: 'error',
      message: `unparseable YAML frontmatter (line ${line}): ${error.message.split('\n')[0]}`,
    };
  }
  const data: unknown = document.toJS();
  if (data === null || data === undefined) return { status: 'ok', data: {}, body };
  if (typeof data !== 'object' || Array.isArray(data)) {
    return { status: 'error', message: 'frontmatter must be YAML "key: value" lines' };
  }
  return { status: 'ok', data: data as Record<string, unknown>, body };
}
