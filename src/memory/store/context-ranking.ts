import type { DayRange } from './query-dates.ts';

/*
 * How memory search ranks: BM25-style weighted coverage of the query's terms, where a text is
 * read with its neighbours (the memories saved just before and after it, the messages around a
 * message). In conversation the answer often shares no word with the question ("Almost three
 * years now!") while the turn before it ("How long have you had the bakery?") holds them all.
 */

/** One query term: a stemmed word with the forms it stands for (the `word_forms` table, migrations/0250), and its weight. */
export type RankingTerm = { lexemes: readonly string[]; weight: number };

/** A text that may rank: a memory or a message, with what it holds and who is around it. */
export type ContextRow = {
  key: string;
  /** Indexes into the query's terms of the terms the text itself holds. */
  held: readonly number[];
  /** Its length in lexemes (search_vector), for BM25's length normalization. */
  length: number;
  /** Who said it, lowercased, when known. */
  speaker: string | null;
  /** The day it is about (`YYYY-MM-DD`): a date its text names, else when it was written. */
  day: string | null;
  /** It holds every `"exact phrase"` of the query. */
  phrase: boolean;
  /** Keys of the texts just before it, nearest first (at most NEIGHBOUR_WEIGHTS.length). */
  before: readonly string[];
  /** Keys of the texts just after it, nearest first. */
  after: readonly string[];
};

export type RankingQuery = {
  terms: readonly RankingTerm[];
  /** Speakers the query names (lowercased): what they said ranks higher. */
  speakers: ReadonlySet<string>;
  /** The days the query names: what happened then ranks higher. */
  days: DayRange | null;
  averageLength: number;
};

export type RankedKey = { key: string; score: number; phrase: boolean };

/** A term held by the text 1 and 2 places away counts this much of its weight. */
export const NEIGHBOUR_WEIGHTS = [0.7, 0.3] as const;
/** What the named speaker said counts this many times. */
export const SPEAKER_BOOST = 1.6;
/** What happened on the days the query names counts this many times. */
export const DAY_BOOST = 2;
/** BM25's term-frequency saturation and (weak: texts are short) length normalization. */
export const BM25_K1 = 1.2;
export const BM25_B = 0.1;
/** The best a length factor can be (the shortest text): bounds what a term can add. */
export const MAX_LENGTH_FACTOR = (BM25_K1 + 1) / (1 + BM25_K1 * (1 - BM25_B));

/** BM25's length factor for a text of `length` lexemes. */
export function lengthFactor(length: number, averageLength: number): number {
  return (BM25_K1 + 1) / (BM25_K1 * (1 - BM25_B + (BM25_B * length) / Math.max(1, averageLength)) + 1);
}

/**
 * Inverse document frequency, raised to 1.25: a query's rare word outweighs several common ones
 * (names, "favorite"), which is what a partial match should be judged by.
 */
export function termWeight(documents: number, documentFrequency: number): number {
  const idf = Math.log(1 + (documents - documentFrequency + 0.5) / (documentFrequency + 0.5));
  return idf ** 1.25;
}

/**
 * Scores every row: Σ over the query's terms of weight × how near the term is (1 in the text,
 * NEIGHBOUR_WEIGHTS in its neighbours; the nearest counts) × the length factor, × SPEAKER_BOOST
 * when the query names who said it, × DAY_BOOST when it happened on a day the query names.
 * Rows holding the exact phrases come first, then by score; equal scores by key, so a search
 * never shuffles. Rows with nothing of the query, themselves or around them, are left out.
 */
export function rankWithContext(rows: ReadonlyMap<string, ContextRow>, query: RankingQuery): RankedKey[] {
  const out: RankedKey[] = [];
  for (const row of rows.values()) {
    const nearness = new Array<number>(query.terms.length).fill(0);
    for (const index of row.held) nearness[index] = 1;
    for (const [distance, weight] of NEIGHBOUR_WEIGHTS.entries()) {
      for (const key of [row.before[distance], row.after[distance]]) {
        const neighbour = key === undefined ? undefined : rows.get(key);
        if (!neighbour) continue;
        for (const index of neighbour.held) nearness[index] = Math.max(nearness[index]!, weight);
      }
    }
    let score = 0;
    for (const [index, term] of query.terms.entries()) score += term.weight * nearness[index]!;
    if (score <= 0) continue;
    score *= lengthFactor(row.length, query.averageLength);
    if (row.speaker !== null && query.speakers.has(row.speaker)) score *= SPEAKER_BOOST;
    if (query.days && row.day !== null && row.day >= query.days.from && row.day <= query.days.to) {
      score *= DAY_BOOST;
    }
    out.push({ key: row.key, score, phrase: row.phrase });
  }
  return out.sort(
    (a, b) => Number(b.phrase) - Number(a.phrase) || b.score - a.score || (a.key < b.key ? -1 : 1),
  );
}
