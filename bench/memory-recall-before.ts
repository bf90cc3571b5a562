import type { Database } from '../src/db/index.ts';

/*
 * "Before" for bench/memory-recall.bench.ts: memory.search's full-text ranking as it was at
 * commit a42163f (BM25 over per-user idf, idf^1.25-weighted coverage, max-score pruning), kept
 * here verbatim so that one run measures it beside the current ranking on the same saved
 * memories. Only the ranking is kept: filters are the user's live memories, and the words
 * come from the same stop-word list search used then.
 */

/** Ids of `userId`'s live memories for `query`, best first, at most `limit` — as search ranked them before. */
export async function searchBefore(
  db: Database,
  userId: string,
  query: string,
  limit: number,
): Promise<string[]> {
  const base: Filters = { params: [userId], where: ['m.user_id = $1', 'm.archived_at IS NULL'] };
  const ranking = await fullTextRanking(db, base, query.trim(), limit);
  return ranking.slice(0, limit).map((row) => row.id);
}

type RankedRow = { id: string; importance: number };
type Filters = { params: readonly unknown[]; where: readonly string[] };
type QueryParts = { wanted: string[]; unwanted: string[] };

const CANDIDATES = 50;

const STOP_WORDS: ReadonlySet<string> = new Set(
  `i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she
  her hers herself it its itself they them their theirs themselves what which who whom this that
  these those am is are was were be been being have has had having do does did doing a an the and
  but if or because as until while of at by for with about against between into through during
  before after above below to from up down in out on off over under again further then once here
  there when where why how all any both each few more most other some such no nor not only own
  same so than too very s t can will just don should now`.split(/\s+/),
);

function contentWords(text: string): string[] {
  const words =
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.filter((word) => !STOP_WORDS.has(word));
}

function queryParts(text: string): QueryParts {
  const tokens = text.split(/\s+/);
  const unwanted = [...new Set(tokens.filter((token) => token.startsWith('-')).flatMap(contentWords))];
  const wanted = [...new Set(tokens.filter((token) => !token.startsWith('-')).flatMap(contentWords))].filter(
    (word) => !unwanted.includes(word),
  );
  return { wanted, unwanted };
}

/** BM25's term-frequency saturation and length normalization (Robertson & Zaragoza's defaults). */
const BM25_K1 = 1.2;
const BM25_B = 0.1;
/**
 * Terms weigh idf^IDF_POWER: above 1, a query's rare word outweighs several common ones (names,
 * dates, "said"), which is what a partial match should be judged by. Tuned on
 * test/support/fixtures/memory-eval (bench/memory-search.bench.ts reports recall).
 */
const IDF_POWER = 1.25;
/** The rows the first, pruned pass may read before it is not worth pruning. */
const PRUNED_ROWS = 2_000;

type QueryTerm = { term: string; docCount: number; weight: number };

/**
 * BM25 over the user's stemmed search_vector lexemes, with per-user inverse document frequency
 * (memory_term_stats, kept by triggers), presence rather than counts (memories are short), and
 * idf^1.25 weights so that partial matches are scored by weighted coverage: a memory holding the
 * query's one rare word beats one holding its three common words. `"exact phrase"` matches
 * come first; `-word` excludes.
 *
 * Max-score pruning: memories are first read only where they hold one of the rarest terms; when
 * the `enough`-th score is above anything the other terms alone could reach, that ranking is
 * exact and the rows sharing only common words are never read.
 */
async function fullTextRanking(
  db: Database,
  base: Filters,
  query: string,
  enough: number,
): Promise<RankedRow[]> {
  const parts = queryParts(query);
  if (parts.wanted.length === 0) return [];
  const statsRows = await db.query<{
    term: string;
    df: number;
    docs: number | null;
    total_length: number | null;
  }>(
    `WITH q AS (SELECT DISTINCT t.lexeme FROM unnest(to_tsvector('english', $2)) t)
     SELECT q.lexeme AS term, COALESCE(s.doc_count, 0) AS df, u.doc_count AS docs, u.total_length
     FROM q LEFT JOIN memory_term_stats s ON s.user_id = $1 AND s.term = q.lexeme
       LEFT JOIN memory_user_stats u ON u.user_id = $1`,
    [base.params[0], parts.wanted.join(' ')],
  );
  const docs = Number(statsRows[0]?.docs ?? 0);
  if (docs <= 0) return [];
  const averageLength = Math.max(1, Number(statsRows[0]?.total_length ?? 0) / docs);
  const terms: QueryTerm[] = statsRows
    .map((row) => ({ term: row.term, docCount: Number(row.df) }))
    .filter((term) => term.docCount > 0)
    .map((term) => {
      const idf = Math.log(1 + (docs - term.docCount + 0.5) / (term.docCount + 0.5));
      return { ...term, weight: idf ** IDF_POWER };
    })
    // Rarest first; ties by term, so the same query always runs the same SQL.
    .sort((a, b) => b.weight - a.weight || (a.term < b.term ? -1 : 1));
  if (terms.length === 0) return [];

  const lexemes = terms.map((term) => quoteLexeme(term.term));
  const rank = (candidates: string) =>
    scoredRanking(db, base, query, parts, terms, lexemes, candidates, averageLength);
  // With an exact phrase, or few rows holding any term, one pass reads them all.
  const total = terms.reduce((sum, term) => sum + term.docCount, 0);
  if (query.includes('"') || total <= PRUNED_ROWS) return rank(lexemes.join(' | '));

  // Max-score pruning. Essential: the rarest terms, as many as PRUNED_ROWS rows allow. A
  // memory holding none of them and at most r - 1 of the m common terms scores at most the
  // r - 1 largest common weights at the best length factor; so reading the memories that hold
  // an essential term or at least r common terms is exact for the first `enough` whenever the
  // `enough`-th score found is above that bound. r starts at m (all common terms: a GIN
  // intersection, cheap however common each term is) and falls until the bound holds.
  let essential = 0;
  for (let rows = 0; essential < terms.length && rows + terms[essential]!.docCount <= PRUNED_ROWS; ) {
    rows += terms[essential]!.docCount;
    essential++;
  }
  const maxNorm = (BM25_K1 + 1) / (1 + BM25_K1 * (1 - BM25_B));
  const rare = lexemes.slice(0, essential);
  const common = lexemes.slice(essential);
  const commonWeights = terms.slice(essential).map((term) => term.weight);
  // With one common term, r = 2 reads the rare terms' memories alone.
  for (let r = Math.max(common.length, 2); r > 1; r--) {
    const groups = combinations(common, r);
    if (groups.length > MAX_GROUPS) break;
    if (groups.length === 0 && rare.length === 0) continue;
    const candidates = [...rare, ...groups.map((group) => `(${group.join(' & ')})`)].join(' | ');
    const ranking = await rank(candidates);
    // commonWeights is sorted descending: the r - 1 largest come first.
    const bound = commonWeights.slice(0, r - 1).reduce((sum, weight) => sum + weight, 0) * maxNorm;
    const floor = ranking[enough - 1]?.score;
    if (floor !== undefined && floor > bound) return ranking;
  }
  return rank(lexemes.join(' | '));
}

/** The most AND groups one pruned pass may OR together (C(m, r) of them). */
const MAX_GROUPS = 10;

/** Every way to choose `size` of `items`, in order. */
function combinations<T>(items: readonly T[], size: number): T[][] {
  if (size === 0) return [[]];
  const out: T[][] = [];
  for (let index = 0; index + size <= items.length; index++) {
    for (const rest of combinations(items.slice(index + 1), size - 1)) out.push([items[index]!, ...rest]);
  }
  return out;
}

/**
 * Ranks the memories matching `candidates` (a tsquery over the terms' quoted lexemes), scored
 * over all terms: Σ weight of the terms a memory holds × the BM25 length factor.
 */
async function scoredRanking(
  db: Database,
  base: Filters,
  query: string,
  parts: QueryParts,
  terms: readonly QueryTerm[],
  lexemes: readonly string[],
  candidates: string,
  averageLength: number,
): Promise<Array<RankedRow & { score: number }>> {
  const params = [...base.params];
  const param = (value: unknown) => `$${params.push(value)}`;
  const matches = terms.map(
    (term, index) =>
      `CASE WHEN m.search_vector @@ ${param(lexemes[index])}::tsquery THEN ${term.weight} ELSE 0 END`,
  );
  const norm = `${BM25_K1 + 1} / (${BM25_K1} * (${1 - BM25_B} + ${BM25_B} * length(m.search_vector) / ${averageLength}::float8) + 1)`;
  const where = [...base.where, `m.search_vector @@ ${param(candidates)}::tsquery`];
  if (parts.unwanted.length > 0) {
    where.push(`NOT (m.search_vector @@ to_tsquery('english', ${param(parts.unwanted.join(' | '))}))`);
  }
  const order = ['score DESC', 'm.importance DESC', 'm.id'];
  if (query.includes('"'))
    order.unshift(`(m.search_vector @@ websearch_to_tsquery('english', ${param(query)})) DESC`);
  const rows = await db.query<{ id: string; importance: number; score: number }>(
    `SELECT m.id, m.importance, (${matches.join(' + ')}) * (${norm}) AS score
     FROM memory_entries m
     WHERE ${where.join(' AND ')}
     ORDER BY ${order.join(', ')}
     LIMIT ${CANDIDATES}`,
    params,
  );
  return rows.map((row) => ({ id: row.id, importance: Number(row.importance), score: Number(row.score) }));
}

/** A lexeme as a tsquery operand, taken literally (it is already stemmed). */
function quoteLexeme(lexeme: string): string {
  return `'${lexeme.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}
