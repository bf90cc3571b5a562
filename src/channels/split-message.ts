/** Length of a chunk as the channel counts it (after formatting). */
export type Measure = (text: string) => number;

const FENCE = /^\s*```/;

/** Paragraphs separated by blank lines; a fenced code block stays one block, blank lines and all. */
function blocks(text: string): string[] {
  const out: string[] = [];
  let current: string[] = [];
  let inFence = false;
  const flush = () => {
    if (current.length) out.push(current.join('\n'));
    current = [];
  };
  for (const line of text.replace(/\r\n/g, '\n').split('\n')) {
    if (FENCE.test(line)) inFence = !inFence;
    if (!inFence && line.trim() === '' && !FENCE.test(line)) {
      flush();
      continue;
    }
    current.push(line);
  }
  flush();
  return out;
}

/** Cuts `text` into pieces that fit, at the last `separator` that fits, else at the last character that fits. */
function cut(text: string, limit: number, measure: Measure, separator: string): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (rest && measure(rest) > limit) {
    // The longest prefix that fits (measure grows with length, so binary search).
    let low = 1;
    let high = rest.length;
    while (low < high) {
      const middle = Math.ceil((low + high) / 2);
      if (measure(rest.slice(0, middle)) <= limit) low = middle;
      else high = middle - 1;
    }
    let end = low;
    const at = rest.lastIndexOf(separator, end);
    if (at > 0) end = at;
    pieces.push(rest.slice(0, end).trimEnd());
    rest = rest.slice(end).replace(/^\s+/, '');
  }
  if (rest) pieces.push(rest);
  return pieces.filter((piece) => piece.length > 0);
}

function splitBlock(block: string, limit: number, measure: Measure): string[] {
  if (measure(block) <= limit) return [block];
  const lines = block.split('\n');
  const fenced = FENCE.test(lines[0] ?? '') && FENCE.test(lines.at(-1) ?? '') && lines.length >= 2;
  if (fenced) {
    // Each piece of a long code block is a code block of its own.
    const opener = lines[0]!.trim();
    const inner = lines.slice(1, -1).join('\n');
    const wrap = (piece: string) => `${opener}\n${piece}\n\`\`\``;
    const room = limit - (measure(wrap('')) - measure(''));
    return cut(inner, Math.max(1, room), measure, '\n').map(wrap);
  }
  const pieces: string[] = [];
  for (const line of greedy(lines, '\n', limit, measure)) {
    if (measure(line) <= limit) pieces.push(line);
    else pieces.push(...cut(line, limit, measure, ' '));
  }
  return pieces;
}

function greedy(parts: string[], joiner: string, limit: number, measure: Measure): string[] {
  const out: string[] = [];
  let current = '';
  for (const part of parts) {
    const candidate = current ? `${current}${joiner}${part}` : part;
    if (current && measure(candidate) > limit) {
      out.push(current);
      current = part;
    } else {
      current = candidate;
    }
  }
  if (current) out.push(current);
  return out;
}

/**
 * Splits a reply into pieces of at most `limit` (as `measure` counts): on paragraph
 * boundaries where possible, then lines, then words; a long code block becomes several code
 * blocks. Joining the pieces with blank lines gives back the text, up to whitespace.
 */
export function splitMessage(
  text: string,
  limit: number,
  measure: Measure = (value) => value.length,
): string[] {
  const trimmed = text.trim();
  if (!trimmed) return [];
  if (measure(trimmed) <= limit) return [trimmed];
  const pieces = blocks(trimmed).flatMap((block) => splitBlock(block, limit, measure));
  return greedy(pieces, '\n\n', limit, measure);
}
