import { continuationEnd } from './continuation.ts';

const SPACE = 32;
const TAB = 9;
const LF = 10;
const CR = 13;
const HASH = 35;
const DOUBLE_QUOTE = 34;
const SINGLE_QUOTE = 39;
const BACKSLASH = 92;

/**
 * Splits the body of a ```` ```cmd ```` block into commands: one per line, except that a newline
 * inside quotes or after a trailing `\` does not end a command. Blank lines and lines that start
 * with `#` are skipped (a `#` later in a line is text, e.g. `--tag #urgent`). Each command is
 * returned as written, trimmed. Never throws: an unterminated quote makes the rest of the block
 * one command, and `parseCommand` reports it.
 */
export function splitCommands(block: string): string[] {
  const commands: string[] = [];
  const length = block.length;
  let index = 0;

  while (index < length) {
    while (index < length && isLineBlank(block.charCodeAt(index))) index++;
    if (index >= length) break;
    const first = block.charCodeAt(index);
    if (first === LF) {
      index++;
      continue;
    }
    if (first === HASH) {
      const newline = block.indexOf('\n', index);
      index = newline === -1 ? length : newline + 1;
      continue;
    }

    const start = index;
    let quote = 0;
    while (index < length) {
      const code = block.charCodeAt(index);
      if (quote === SINGLE_QUOTE) {
        if (code === SINGLE_QUOTE) quote = 0;
        index++;
      } else if (quote === DOUBLE_QUOTE) {
        if (code === DOUBLE_QUOTE) quote = 0;
        // Skip whatever a backslash escapes so that `\"` does not close the quote.
        index += code === BACKSLASH ? 2 : 1;
      } else if (code === SINGLE_QUOTE || code === DOUBLE_QUOTE) {
        quote = code;
        index++;
      } else if (code === BACKSLASH) {
        const resume = continuationEnd(block, index);
        index = resume === -1 ? index + 2 : resume;
      } else if (code === LF) {
        break;
      } else {
        index++;
      }
    }
    const command = block.slice(start, Math.min(index, length)).trim();
    if (command !== '') commands.push(command);
    index++;
  }
  return commands;
}

const isLineBlank = (code: number) => code === SPACE || code === TAB || code === CR;
