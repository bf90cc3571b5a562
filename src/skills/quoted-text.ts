import { isOutsideSource } from './external.ts';

/*
 * Keeps outside text away from the sentinel. An agent steered by an email may copy the email
 * into its command or mission (`files.write --content "<the email>"`); the sentinel must judge
 * the command without reading that text, or the text could steer the judge too. So every
 * stretch of a command that repeats text read from outside in the same turn is replaced by a
 * note of where it came from. Matching ignores case, whitespace, quote marks and escapes.
 */

/** Copied stretches shorter than this stay (addresses, names, dates the user may have asked for). */
export const QUOTE_MIN_CHARS = 20;
/** Outside text remembered per turn; a turn that read more keeps the latest. */
const MAX_REMEMBERED_CHARS = 200_000;

export type OutsideText = { source: string; body: string };

/** The outside fences in a tool result: each fence's source and body. */
export function outsideTexts(content: string): OutsideText[] {
  const found: OutsideText[] = [];
  for (const match of content.matchAll(/<external source="([^"]+)">\n([\s\S]*?)\n<\/external>/g)) {
    if (isOutsideSource(match[1]!)) found.push({ source: match[1]!, body: match[2]! });
  }
  return found;
}

/** What one turn has read from outside, and an index of it for finding copies. */
export class TurnQuotes {
  readonly #texts: OutsideText[] = [];
  #chars = 0;
  #windows: Map<string, string> | null = null;

  add(texts: readonly OutsideText[]): void {
    for (const text of texts) {
      this.#texts.push(text);
      this.#chars += text.body.length;
    }
    while (this.#chars > MAX_REMEMBERED_CHARS && this.#texts.length > 1) {
      this.#chars -= this.#texts.shift()!.body.length;
    }
    if (texts.length) this.#windows = null;
  }

  get empty(): boolean {
    return this.#texts.length === 0;
  }

  /** `text` with each stretch copied from what the turn read replaced by `[N characters from SOURCE]`. */
  redact(text: string): string {
    if (this.empty || text.length < QUOTE_MIN_CHARS) return text;
    const windows = this.#index();
    const { chars, origin, widths } = normalize(text);
    const sourceAt: Array<string | undefined> = new Array(chars.length);
    for (let start = 0; start + QUOTE_MIN_CHARS <= chars.length; start++) {
      const source = windows.get(chars.slice(start, start + QUOTE_MIN_CHARS));
      if (source === undefined) continue;
      for (let at = start; at < start + QUOTE_MIN_CHARS; at++) sourceAt[at] ??= source;
    }
    let out = '';
    let copied = 0;
    for (let at = 0; at < chars.length; ) {
      const source = sourceAt[at];
      if (source === undefined) {
        at++;
        continue;
      }
      let end = at;
      while (end < chars.length && sourceAt[end] !== undefined) end++;
      const from = origin[at]!;
      const to = origin[end - 1]! + widths[end - 1]!;
      out += `${text.slice(copied, from)}[${to - from} characters from ${source}]`;
      copied = to;
      at = end;
    }
    return out + text.slice(copied);
  }

  #index(): Map<string, string> {
    if (this.#windows) return this.#windows;
    const windows = new Map<string, string>();
    for (const { source, body } of this.#texts) {
      const { chars } = normalize(body);
      for (let start = 0; start + QUOTE_MIN_CHARS <= chars.length; start++) {
        const window = chars.slice(start, start + QUOTE_MIN_CHARS);
        if (!windows.has(window)) windows.set(window, source);
      }
    }
    this.#windows = windows;
    return windows;
  }
}

/**
 * Lower-cased text without quote marks, whitespace runs as one space, and `\n`, `\t`, `\"`
 * escapes read as what they stand for; `origin[i]` and `widths[i]` locate character i in `text`.
 */
function normalize(text: string): { chars: string; origin: number[]; widths: number[] } {
  let chars = '';
  const origin: number[] = [];
  const widths: number[] = [];
  let afterSpace = false;
  for (let index = 0; index < text.length; ) {
    let char = text[index]!;
    let width = 1;
    const next = text[index + 1];
    if (char === '\\' && next !== undefined && 'ntr"\'\\'.includes(next)) {
      char = 'ntr'.includes(next) ? ' ' : next;
      width = 2;
    }
    if (char === '"' || char === "'" || char === '\u200B') {
      // Quoting differs between the text and a command carrying it (and defuse() adds U+200B): skip them.
      index += width;
      continue;
    }
    if (/\s/.test(char)) {
      if (!afterSpace) {
        chars += ' ';
        origin.push(index);
        widths.push(width);
      } else {
        widths[widths.length - 1] = index + width - origin[origin.length - 1]!;
      }
      afterSpace = true;
    } else {
      const lower = char.toLowerCase();
      chars += lower.length === 1 ? lower : char;
      origin.push(index);
      widths.push(width);
      afterSpace = false;
    }
    index += width;
  }
  return { chars, origin, widths };
}
