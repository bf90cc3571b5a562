const SPACE = 32;
const TAB = 9;
const CR = 13;
const LF = 10;

/**
 * A backslash that ends a line (only spaces, tabs or a CR may follow it before the newline)
 * continues the command on the next line. Models often leave a stray space after the `\`,
 * so that counts too. Returns the index just past the newline, or -1 when the backslash at
 * `backslashIndex` does not end its line.
 */
export function continuationEnd(text: string, backslashIndex: number): number {
  let index = backslashIndex + 1;
  while (index < text.length) {
    const code = text.charCodeAt(index);
    if (code === LF) return index + 1;
    if (code !== SPACE && code !== TAB && code !== CR) return -1;
    index++;
  }
  return -1;
}
