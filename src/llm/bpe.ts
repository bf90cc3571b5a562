import { readFileSync } from 'node:fs';
import { gunzipWhole } from '../db/index.ts';

type Ranks = { bpe_ranks: string; pat_str: string };

/**
 * OpenAI's o200k_base ranks in js-tiktoken's compact form (`{pat_str, bpe_ranks}`, 2.3 MB;
 * 1.1 MB gzipped here), read on the first count rather than at start-up. Kept in the repo
 * rather than depending on js-tiktoken (22 MB of every encoding, twice over) for this one table.
 */
function loadRanks(): Ranks {
  return JSON.parse(
    gunzipWhole(readFileSync(new URL('./o200k_base.json.gz', import.meta.url))).toString('utf8'),
  ) as Ranks;
}

/*
 * Byte-pair encoding over OpenAI's o200k_base ranks, written for counting: js-tiktoken's own
 * encoder recompiles its regexes on every call and merges pairs by rescanning the whole piece,
 * so one long word (a base64 blob, 20 KB without a space) took seconds and blocked the event
 * loop. Here the pre-tokenizer is compiled once and each piece is merged with a heap over its
 * adjacent pairs — O(n log n) — giving the same tokens in linear-looking time.
 */

/**
 * The ~200k ranks in flat typed arrays outside the JavaScript heap (about 5 MB): every token's
 * bytes back to back, each rank's offset and length, and an open-addressing hash table from
 * bytes to rank. A Map of 200k binary strings held 15 MB of heap that every full collection
 * walked.
 */
class RankTable {
  readonly #bytes: Buffer;
  readonly #offsets: Uint32Array;
  readonly #lengths: Uint16Array;
  /** rank + 1 per slot, 0 for an empty slot; linear probing. */
  readonly #slots: Int32Array;

  constructor(bytes: Buffer, offsets: Uint32Array, lengths: Uint16Array, count: number) {
    this.#bytes = bytes;
    this.#offsets = offsets;
    this.#lengths = lengths;
    // A power of two at least twice the number of tokens keeps probe runs short.
    let size = 1;
    while (size < count * 2) size *= 2;
    this.#slots = new Int32Array(size);
    for (let rank = 0; rank < lengths.length; rank++) {
      if (lengths[rank] === 0) continue;
      let hash = FNV_OFFSET;
      const from = offsets[rank]!;
      for (let index = from; index < from + lengths[rank]!; index++)
        hash = Math.imul(hash ^ bytes[index]!, FNV_PRIME);
      let slot = hash & (size - 1);
      while (this.#slots[slot] !== 0) slot = (slot + 1) & (size - 1);
      this.#slots[slot] = rank + 1;
    }
  }

  /** The rank of the bytes `piece[from, to)` (a binary string, one char per byte), or -1. */
  rank(piece: string, from: number, to: number): number {
    let hash = FNV_OFFSET;
    for (let index = from; index < to; index++) hash = Math.imul(hash ^ piece.charCodeAt(index), FNV_PRIME);
    const mask = this.#slots.length - 1;
    const length = to - from;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const entry = this.#slots[slot]!;
      if (entry === 0) return -1;
      const rank = entry - 1;
      if (this.#lengths[rank] === length && this.#equals(rank, piece, from)) return rank;
    }
  }

  /** The bytes of `rank` (empty for an unknown rank). */
  bytes(rank: number): Buffer {
    if (!(rank >= 0 && rank < this.#lengths.length)) return EMPTY;
    const from = this.#offsets[rank]!;
    return this.#bytes.subarray(from, from + this.#lengths[rank]!);
  }

  #equals(rank: number, piece: string, from: number): boolean {
    const bytes = this.#bytes;
    const offset = this.#offsets[rank]! - from;
    for (let index = from; index < from + this.#lengths[rank]!; index++)
      if (bytes[offset + index] !== piece.charCodeAt(index)) return false;
    return true;
  }
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const EMPTY = Buffer.alloc(0);

type Encoding = { ranks: RankTable; pattern: RegExp };

let encoding: Encoding | null = null;

/** Parses the ~200k ranks once, on first use (a few hundred ms). */
function load(): Encoding {
  if (encoding) return encoding;
  const o200kBase = loadRanks();
  const text = o200kBase.bpe_ranks;
  // Base64 never decodes to more than 3/4 of its length.
  const bytes = Buffer.allocUnsafe(Math.ceil((text.length * 3) / 4));
  let used = 0;
  let offsets = new Uint32Array(1 << 18);
  let lengths = new Uint16Array(1 << 18);
  let count = 0;
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
        while (rank >= offsets.length) {
          offsets = grow(offsets, new Uint32Array(offsets.length * 2));
          lengths = grow(lengths, new Uint16Array(lengths.length * 2));
        }
        const written = bytes.write(text.slice(cursor + 1, next), used, 'base64');
        offsets[rank] = used;
        lengths[rank] = written;
        used += written;
        count++;
        rank++;
        cursor = next;
      }
    }
    lineStart = lineEnd + 1;
  }
  encoding = {
    ranks: new RankTable(bytes.subarray(0, used), offsets, lengths, count),
    pattern: new RegExp(o200kBase.pat_str, 'gu'),
  };
  return encoding;
}

function grow<T extends Uint32Array | Uint16Array>(from: T, to: T): T {
  to.set(from);
  return to;
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
function encodePiece(piece: string, ranks: RankTable): number[] {
  const whole = ranks.rank(piece, 0, piece.length);
  if (whole !== -1) return [whole];
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
    const rank = ranks.rank(piece, start, end[next]!);
    if (rank !== -1) heap.push([rank, start]);
  };
  for (let index = 0; index < n - 1; index++) consider(index);
  while (heap.size > 0) {
    const [rank, start] = heap.pop();
    if (!alive[start]) continue;
    const next = end[start]!;
    if (next >= n || !alive[next]) continue;
    // Stale entry: the pair at `start` changed since it was pushed.
    if (ranks.rank(piece, start, end[next]!) !== rank) continue;
    end[start] = end[next]!;
    alive[next] = 0;
    if (end[start]! < n) prev[end[start]!] = start;
    consider(start);
    if (prev[start]! >= 0) consider(prev[start]!);
  }
  const tokens: number[] = [];
  for (let start = 0; start < n; start = end[start]!) tokens.push(ranks.rank(piece, start, end[start]!));
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
  const { ranks } = load();
  return Buffer.concat(tokens.map((token) => ranks.bytes(token))).toString('utf8');
}
