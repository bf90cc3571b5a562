import { createHash } from 'node:crypto';

/**
 * PostgreSQL's English stop words (tsearch_data/english.stop), so that what counts as a word
 * here is what full-text search indexes.
 */
const STOP_WORDS: ReadonlySet<string> = new Set(
  `i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she
  her hers herself it its itself they them their theirs themselves what which who whom this that
  these those am is are was were be been being have has had having do does did doing a an the and
  but if or because as until while of at by for with about against between into through during
  before after above below to from up down in out on off over under again further then once here
  there when where why how all any both each few more most other some such no nor not only own
  same so than too very s t can will just don should now`.split(/\s+/),
);

/** Lowercased words of `text` (letters and digits), stop words removed, in order. */
export function contentWords(text: string): string[] {
  const words =
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.filter((word) => !STOP_WORDS.has(word));
}

/** |A ∩ B| / |A ∪ B| over the two texts' word sets; 0 when both are empty. */
export function wordJaccard(a: string, b: string): number {
  const left = new Set(contentWords(a));
  const right = new Set(contentWords(b));
  if (left.size === 0 && right.size === 0) return 0;
  let shared = 0;
  for (const word of left) if (right.has(word)) shared++;
  return shared / (left.size + right.size - shared);
}

/** Content as stored: trimmed, runs of whitespace collapsed. */
export function cleanContent(text: string): string {
  return text.normalize('NFKC').trim().replace(/\s+/g, ' ');
}

/** sha256 of the content lowercased, whitespace collapsed and trailing punctuation dropped. */
export function contentHash(text: string): string {
  const normalized = cleanContent(text)
    .toLowerCase()
    .replace(/[\s.!?;,]+$/u, '');
  return createHash('sha256').update(normalized).digest('hex');
}

export type QueryParts = { wanted: string[]; unwanted: string[] };

/** The query's content words to find and those after a `-` (websearch negation) to exclude. */
export function queryParts(text: string): QueryParts {
  const tokens = text.split(/\s+/);
  const unwanted = [...new Set(tokens.filter((token) => token.startsWith('-')).flatMap(contentWords))];
  const wanted = [...new Set(tokens.filter((token) => !token.startsWith('-')).flatMap(contentWords))].filter(
    (word) => !unwanted.includes(word),
  );
  return { wanted, unwanted };
}

/** Tags are stored lowercase, without a leading `#`, once each. */
export function normalizeTags(tags: readonly string[]): string[] {
  const out: string[] = [];
  for (const tag of tags) {
    const clean = tag.trim().replace(/^#+/, '').toLowerCase().replace(/\s+/g, '-');
    if (clean && !out.includes(clean)) out.push(clean);
  }
  return out;
}

/** How entity names are matched: case, Unicode compatibility forms, spacing and outer punctuation ignored. */
export function normalizeEntityName(name: string): string {
  return name
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
}
