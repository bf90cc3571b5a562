import { splitCommands } from './split-commands.ts';

/** One ```` ```cmd ```` block in model output. `start`/`end` delimit the whole fence, for stripping it. */
export type CommandBlock = {
  /** The text between the fences. */
  body: string;
  start: number;
  end: number;
  /** False when the model never closed the block; it then runs to the end of the text (or the next opener). */
  closed: boolean;
};

const OPENER_SOURCE = '^[ \\t]*(`{3,})cmd[ \\t]*\\r?$';
const OPENER_LINE = /^[ \t]*`{3,}cmd$/i;
const BACKTICK = 96;

/**
 * Finds every ```` ```cmd ```` block. The opener sits on its own line (indentation and trailing
 * spaces allowed). As in CommonMark, the first line of at least as many backticks closes the
 * block, quotes or not, so a value that contains a ``` line needs a ```` ````cmd ```` fence.
 * Two slips models make are tolerated: a closing fence glued to the last command
 * (`tasks.list```) and a missing one (the block runs to the end, or to the next opener).
 */
export function findCommandBlocks(text: string): CommandBlock[] {
  const opener = new RegExp(OPENER_SOURCE, 'gim');
  const blocks: CommandBlock[] = [];
  let searchFrom = 0;

  while (searchFrom < text.length) {
    opener.lastIndex = searchFrom;
    const match = opener.exec(text);
    if (match === null) break;
    const fenceLength = match[1]!.length;
    let bodyStart = match.index + match[0].length;
    if (text[bodyStart] === '\n') bodyStart++;

    let bodyEnd = text.length;
    let end = text.length;
    let closed = false;
    let lineStart = bodyStart;
    while (lineStart < text.length) {
      const newline = text.indexOf('\n', lineStart);
      const lineEnd = newline === -1 ? text.length : newline;
      const line = text.slice(lineStart, lineEnd).trimEnd();
      const backticks = trailingBackticks(line);
      if (backticks >= fenceLength) {
        bodyEnd = lineStart + line.length - backticks;
        end = lineEnd;
        closed = true;
        break;
      }
      if (OPENER_LINE.test(line)) {
        bodyEnd = lineStart;
        end = lineStart;
        break;
      }
      lineStart = lineEnd + 1;
    }

    blocks.push({ body: text.slice(bodyStart, bodyEnd), start: match.index, end, closed });
    searchFrom = end;
  }
  return blocks;
}

/** Every command in the ```` ```cmd ```` blocks of `text`, in order (see `findCommandBlocks`, `splitCommands`). */
export function extractCommands(text: string): string[] {
  return findCommandBlocks(text).flatMap((block) => splitCommands(block.body));
}

function trailingBackticks(line: string): number {
  let count = 0;
  for (let index = line.length - 1; index >= 0 && line.charCodeAt(index) === BACKTICK; index--) count++;
  return count;
}
