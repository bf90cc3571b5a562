import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';

type Ranks = { bpe_ranks: string; pat_str: string };

/**
 * OpenAI's o200k_base ranks in js-tiktoken's compact form (`{pat_str, bpe_ranks}`, 2.3 MB;
 * 1.1 MB gzipped here), read on the first count rather than at start-up. Kept in the repo
 * rather than depending on js-tiktoken (22 MB of every encoding, twice over) for this one table.
 */
function loadRanks(): Ranks {
  return JSON.parse(
    gunzipSync(readFileSync(new URL('./o200k_base.json.gz', import.meta.url))).toString('utf8'),
  ) as Ranks;
}

/*
 * Byte-pair encoding over OpenAI's o200k_base ranks, written for counting: js-tiktoken's own
 * encoder recompiles its regexes on every call and merges pairs by rescanning the whole piece,
 * so one long word (a base64 blob, 20 KB without a space) took seconds and blocked the event
 * loop. Here the pre-tokenizer is compiled once and each piece is merged with a heap over its
 * adjacent pairs — O(n log n) — giving the same tokens in linear-looking time.
 */

type Encoding = {
  /** Byte sequences (as binary strings, one char per byte) → rank. */
  ranks: Map<string, number>;
  pattern: RegExp;
};

let encoding: Encoding | null = null;
/** Rank → bytes (a binary string), built from `ranks` on the first decode only. */
let byRank: Map<number, string> | null = null;

/**
 * Parses the ~200k ranks once, on first use (a few hundred ms). Only the rank map is kept:
 * one Uint8Array per token for decoding cost more memory than all the rest.
 */
function load(): Encoding {
  if (encoding) return encoding;
  const ranks = new Map<string, number>();
  const o200kBase = loadRanks();
  const text = o200kBase.bpe_ranks;
  // Lines of "<name> <first rank> <base64 token> <base64 token> …".
  let lineStart = 0;
  while (lineStart < text.length) {
    let lineEnd = text.indexOf('\n', lineStart);
    if (lineEnd === -1) lineEnd = text.length;
    const nameEnd = text.indexOf(' ', lineStart);
    if (nameEnd !== -1 && nameEnd < lineEnd) {
      let cursor = text.indexOf(' ', nameEnd + 1);
      if (cursor === -1 || cursor > lineEnd) cursor = lineEnd;
      let rank = Number.parseInt(text.slice(nameEnd + 1, cursor), 10);
      while (cursor < lineEnd) {
        let next = text.indexOf(' ', cursor + 1);
        if (next === -1 || next > lineEnd) next = lineEnd;
        ranks.set(Buffer.from(text.slice(cursor + 1, next), 'base64').toString('latin1'), rank++);
        cursor = next;
      }
    }
    lineStart = lineEnd + 1;
  }
  encoding = { ranks, pattern: new RegExp(o200kBase.pat_str, 'gu') };
  return encoding;
}

/** A min-heap of candidate merges: [rank, left part start]. */
class MergeHeap {
  readonly #items: Array<[number, number]> = [];
  get size(): number {
    return this.#items.length;
  }
  push(item: [number, number]): void {
    const items = this.#items;
    items.push(item);
    let index = items.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!before(items[index]!, items[parent]!)) break;
      [items[index], items[parent]] = [items[parent]!, items[index]!];
      index = parent;
    }
  }
  pop(): [number, number] {
    const items = this.#items;
    const top = items[0]!;
    const last = items.pop()!;
    if (items.length > 0) {
      items[0] = last;
      let index = 0;
      for (;;) {
        const left = index * 2 + 1;
        const right = left + 1;
        let smallest = index;
        if (left < items.length && before(items[left]!, items[smallest]!)) smallest = left;
        if (right < items.length && before(items[right]!, items[smallest]!)) smallest = right;
        if (smallest === index) break;
        [items[index], items[smallest]] = [items[smallest]!, items[index]!];
        index = smallest;
      }
    }
    return top;
  }
}

const before = (a: [number, number], b: [number, number]) => a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);

/** The ranks of one pre-token's bytes (given as a binary string), lowest-rank pair merged first. */
function encodePiece(piece: string, ranks: Map<string, number>): number[] {
  const whole = ranks.get(piece);
  if (whole !== undefined) return [whole];
  const n = piece.length;
  // Parts as a linked list of [start, end) over the piece; next/prev by start index.
  const end = new Int32Array(n);
  const prev = new Int32Array(n);
  const alive = new Uint8Array(n).fill(1);
  for (let index = 0; index < n; index++) {
    end[index] = index + 1;
    prev[index] = index - 1;
  }
  const heap = new MergeHeap();
  const consider = (start: number) => {
    const next = end[start]!;
    if (next >= n) return;
    const rank = ranks.get(piece.slice(start, end[next]!));
    if (rank !== undefined) heap.push([rank, start]);
  };
  for (let index = 0; index < n - 1; index++) consider(index);
  while (heap.size > 0) {
    const [rank, start] = heap.pop();
    if (!alive[start]) continue;
    const next = end[start]!;
    if (next >= n || !alive[next]) continue;
    // Stale entry: the pair at `start` changed since it was pushed.
    if (ranks.get(piece.slice(start, end[next]!)) !== rank) continue;
    end[start] = end[next]!;
    alive[next] = 0;
    if (end[start]! < n) prev[end[start]!] = start;
    consider(start);
    if (prev[start]! >= 0) consider(prev[start]!);
  }
  const tokens: number[] = [];
  for (let start = 0; start < n; start = end[start]!)
    tokens.push(ranks.get(piece.slice(start, end[start]!))!);
  return tokens;
}

const utf8 = new TextEncoder();
/** An ASCII string is already its own UTF-8 bytes, one char per byte. */
function isAscii(text: string): boolean {
  for (let index = 0; index < text.length; index++) if (text.charCodeAt(index) > 0x7f) return false;
  return true;
}

/** Every token of `text`, special-token text treated as ordinary text. */
export function* encodeTokens(text: string): Generator<number[]> {
  const { ranks, pattern } = load();
  pattern.lastIndex = 0;
  for (const match of text.matchAll(pattern)) {
    const piece = isAscii(match[0]) ? match[0] : Buffer.from(utf8.encode(match[0])).toString('latin1');
    yield encodePiece(piece, ranks);
  }
}

/** The text of some tokens (bytes decoded as UTF-8; a split character becomes U+FFFD). */
export function decodeTokens(tokens: readonly number[]): string {
  if (!byRank) {
    byRank = new Map();
    for (const [bytes, rank] of load().ranks) byRank.set(rank, bytes);
  }
  const bytes = byRank;
  return Buffer.from(tokens.map((token) => bytes.get(token) ?? '').join(''), 'latin1').toString('utf8');
}
