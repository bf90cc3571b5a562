import { continuationEnd } from './continuation.ts';

/**
 * One shell-like word. `quoted` is true when the word opens with a quote: that is what makes
 * `"--draft"` a value rather than a flag, while `--title="a b"` (which opens unquoted) stays a flag.
 */
export type Token = { value: string; quoted: boolean };

/** `position` is the 0-based string index where the problem starts. */
export type TokenizeResult = { ok: true; tokens: Token[] } | { ok: false; error: string; position: number };

const SPACE = 32;
const TAB = 9;
const LF = 10;
const VT = 11;
const FF = 12;
const CR = 13;
const DOUBLE_QUOTE = 34;
const SINGLE_QUOTE = 39;
const BACKSLASH = 92;
const LOWER_N = 110;
const LOWER_T = 116;

const isBlank = (code: number) =>
  code === SPACE || code === TAB || code === LF || code === CR || code === VT || code === FF;

/** Outside quotes, a backslash makes these characters literal; before anything else it is kept as is. */
const isEscapable = (code: number) =>
  code === SPACE || code === TAB || code === SINGLE_QUOTE || code === DOUBLE_QUOTE || code === BACKSLASH;

/**
 * Splits one command into words, the way a shell would: whitespace separates words, `'single'`
 * quotes are literal, `"double"` quotes decode `\"` `\\` `\n` `\t` (other backslashes stay),
 * adjacent pieces join into one word, and a backslash at the end of a line continues the command.
 * Never throws: an unterminated quote comes back as `ok: false` with a message meant for the model.
 */
export function tokenize(command: string): TokenizeResult {
  const tokens: Token[] = [];
  const length = command.length;
  let value = '';
  let inToken = false;
  let quoted = false;
  let index = 0;

  const endToken = () => {
    if (!inToken) return;
    tokens.push({ value, quoted });
    value = '';
    inToken = false;
    quoted = false;
  };

  while (index < length) {
    const code = command.charCodeAt(index);

    if (isBlank(code)) {
      endToken();
      index++;
      continue;
    }

    if (code === SINGLE_QUOTE) {
      const close = command.indexOf("'", index + 1);
      if (close === -1) return unterminated(command, index, 'single');
      if (!inToken) {
        inToken = true;
        quoted = true;
      }
      value += command.slice(index + 1, close);
      index = close + 1;
      continue;
    }

    if (code === DOUBLE_QUOTE) {
      if (!inToken) {
        inToken = true;
        quoted = true;
      }
      let cursor = index + 1;
      let runStart = cursor;
      let closed = false;
      while (cursor < length) {
        const inner = command.charCodeAt(cursor);
        if (inner === DOUBLE_QUOTE) {
          closed = true;
          break;
        }
        if (inner !== BACKSLASH) {
          cursor++;
          continue;
        }
        const next = cursor + 1 < length ? command.charCodeAt(cursor + 1) : -1;
        const decoded =
          next === DOUBLE_QUOTE || next === BACKSLASH
            ? command[cursor + 1]
            : next === LOWER_N
              ? '\n'
              : next === LOWER_T
                ? '\t'
                : null;
        if (decoded === null) {
          cursor++;
          continue;
        }
        value += command.slice(runStart, cursor) + decoded;
        cursor += 2;
        runStart = cursor;
      }
      if (!closed) return unterminated(command, index, 'double');
      value += command.slice(runStart, cursor);
      index = cursor + 1;
      continue;
    }

    if (code === BACKSLASH) {
      const resume = continuationEnd(command, index);
      if (resume !== -1) {
        endToken();
        index = resume;
        continue;
      }
      if (!inToken && onlyBlanksFollow(command, index + 1)) {
        // A lone `\` at the very end: a continuation into nothing (the block ended after it).
        break;
      }
      const next = index + 1 < length ? command.charCodeAt(index + 1) : -1;
      inToken = true;
      if (isEscapable(next)) {
        value += command[index + 1];
        index += 2;
      } else {
        value += '\\';
        index++;
      }
      continue;
    }

    // A run of ordinary characters.
    let cursor = index + 1;
    while (cursor < length) {
      const inner = command.charCodeAt(cursor);
      if (isBlank(inner) || inner === SINGLE_QUOTE || inner === DOUBLE_QUOTE || inner === BACKSLASH) break;
      cursor++;
    }
    inToken = true;
    value += command.slice(index, cursor);
    index = cursor;
  }

  endToken();
  return { ok: true, tokens };
}

function onlyBlanksFollow(text: string, from: number): boolean {
  for (let index = from; index < text.length; index++) {
    if (!isBlank(text.charCodeAt(index))) return false;
  }
  return true;
}

function unterminated(command: string, position: number, kind: 'single' | 'double'): TokenizeResult {
  const where = describePosition(command, position);
  const fix =
    kind === 'single'
      ? 'Close the quote, or put text that contains an apostrophe in double quotes ("it\'s").'
      : 'Close the quote or use single quotes for text containing ".';
  const escapedQuoteHint =
    kind === 'double' && command.indexOf('\\"', position) !== -1
      ? ' Inside double quotes \\" is a literal quote, not the closing one; write \\\\ for a backslash.'
      : '';
  return {
    ok: false,
    error: `Unterminated ${kind} quote starting at ${where}. ${fix}${escapedQuoteHint}`,
    position,
  };
}

/** "column 23" for a one-line command, "line 2, column 5" otherwise (1-based, in characters). */
function describePosition(text: string, position: number): string {
  const lineStart = text.lastIndexOf('\n', position - 1) + 1;
  const column = Array.from(text.slice(lineStart, position)).length + 1;
  if (!text.includes('\n')) return `column ${column}`;
  const line = text.slice(0, position).split('\n').length;
  return `line ${line}, column ${column}`;
}
