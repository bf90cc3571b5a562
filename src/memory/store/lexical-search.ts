import type { Database } from '../../db/index.ts';
import {
  BM25_B,
  BM25_K1,
  type ContextRow,
  MAX_LENGTH_FACTOR,
  NEIGHBOUR_WEIGHTS,
  rankWithContext,
} from './context-ranking.ts';
import { queryDayRange } from './query-dates.ts';
import { analyseQuery, type Term } from './query-terms.ts';
import { queryParts } from './text.ts';

/** The conditions a memory must meet, over `memory_entries m`, with their parameters ($1 = user). */
export type MemoryFilters = { params: readonly unknown[]; where: readonly string[] };

export type LexicalSearch = {
  userId: string;
  query: string;
  memories: MemoryFilters | null;
  /** Search the user's messages too; messages of this turn are left out (they are the question). */
  messages: { excludeTurnId?: string | null } | null;
  /** The results wanted: the ranking is exact at least this deep before context is added. */
  enough: number;
  now: Date;
  /** The user's time zone: what "yesterday" and a message's day mean. */
  timeZone: string;
};

export type LexicalHit = { kind: 'memory' | 'message'; id: string; score: number; importance: number };

/** How many ranked texts a lexical search hands on (for fusion with vectors). */
export const LEXICAL_RESULTS = 50;
/** How many texts per source are read, best first by their own words. */
const CANDIDATES = 100;
/** The best candidates whose neighbours are read too. */
const WITH_NEIGHBOURS = 40;
/** The rows the first, pruned pass may read before it is not worth pruning. */
const PRUNED_ROWS = 2_000;
/** A term weighing less than this share of the query's heaviest is not read for (see chooseCandidates). */
const NEGLIGIBLE_WEIGHT = 0.05;
/** The most AND groups one pruned pass may OR together (C(m, r) of them). */
const MAX_GROUPS = 10;

/**
 * Ranks the user's memories and/or messages for `query` by their words and their context
 * (context-ranking.ts): reads the texts holding the query's terms (with max-score pruning when
 * they are many), then the neighbours of the best of them, and scores them all. Per-user term
 * statistics (memory_term_stats, message_term_stats) give the weights; over both sources they
 * add up, so one ranking orders memories and messages together.
 */
export async function lexicalRanking(db: Database, search: LexicalSearch): Promise<LexicalHit[]> {
  const parts = queryParts(search.query);
  if (parts.wanted.length === 0) return [];
  const analysed = await analyseQuery(db, search, parts.wanted);
  if (!analysed) return [];
  const { terms, speakers, averageLength } = analysed;
  const days = queryDayRange(search.query, search.now, search.timeZone);
  const rows = new Map<string, ContextRow & { importance: number }>();
  const readers: Array<Promise<void>> = [];
  if (search.memories && analysed.memoryDocs > 0) {
    readers.push(readSource(db, memorySource(search.memories), search, parts, terms, averageLength, rows));
  }
  if (search.messages && analysed.messageDocs > 0) {
    readers.push(readSource(db, messageSource(search), search, parts, terms, averageLength, rows));
  }
  await Promise.all(readers);
  const ranked = rankWithContext(rows, { terms, speakers, days, averageLength });
  return ranked.slice(0, LEXICAL_RESULTS).map((hit) => ({
    kind: hit.key.startsWith('m:') ? 'memory' : 'message',
    id: hit.key.slice(2),
    score: hit.score,
    importance: rows.get(hit.key)?.importance ?? 0.5,
  }));
}

/** How one source (memories or messages) is read: its table, filters and its texts' order. */
type Source = {
  prefix: 'm:' | 'g:';
  /** FROM clause naming the table `m`. */
  table: string;
  /** Parameters, $1 first (the user), and conditions over `m`. */
  params: readonly unknown[];
  where: readonly string[];
  importance: string;
  /** The day a row is about, given the time-zone parameter. */
  day: (timeZone: string) => string;
  speaker: string;
  /** What a row's position counts within (the user's memories, a conversation's messages). */
  sequence: string;
  /** Every row is in one sequence (the user's): a neighbour is found by its position alone. */
  oneSequence: boolean;
  /** When two adjacent texts are context of each other (what `context` holds, see SourceRow). */
  context: string;
  together: (a: SourceRow, b: SourceRow) => boolean;
  count: (term: Term) => number;
};

function memorySource(filters: MemoryFilters): Source {
  return {
    prefix: 'm:',
    table: 'memory_entries m',
    params: filters.params,
    where: filters.where,
    importance: 'm.importance',
    day: (tz) => `COALESCE(m.happened_on, (m.created_at AT TIME ZONE ${tz})::date)`,
    speaker: 'm.speaker',
    sequence: 'm.user_id',
    oneSequence: true,
    context: `COALESCE(m.source_conversation_id, '') || ' ' || extract(epoch FROM m.created_at)::bigint`,
    // Turns of one conversation: lines of a transcript (`Name: …`, both with a speaker) saved
    // in the same conversation (or both outside one) within NEIGHBOUR_GAP_SECONDS. A memory
    // that is a self-contained statement is read alone: its neighbours are other facts.
    together: (a, b) => {
      if (a.speaker === null || b.speaker === null) return false;
      const [conversationA, timeA] = splitContext(a.context);
      const [conversationB, timeB] = splitContext(b.context);
      return conversationA === conversationB && Math.abs(timeA - timeB) <= NEIGHBOUR_GAP_SECONDS;
    },
    count: (term) => term.memoryCount,
  };
}

function messageSource(search: LexicalSearch): Source {
  const params: unknown[] = [search.userId];
  const where = ['m.user_id = $1', 'm.search_vector IS NOT NULL', 'm.position IS NOT NULL'];
  const excluded = search.messages?.excludeTurnId;
  if (excluded) where.push(`m.turn_id IS DISTINCT FROM $${params.push(excluded)}`);
  return {
    prefix: 'g:',
    table: 'messages m',
    params,
    where,
    importance: '0.5::real',
    day: (tz) => `(m.created_at AT TIME ZONE ${tz})::date`,
    speaker: "lower(COALESCE(m.speaker, CASE m.role WHEN 'assistant' THEN 'steward' END))",
    sequence: 'm.conversation_id',
    oneSequence: false,
    context: "''",
    // A conversation is its own context, however long its pauses.
    together: () => true,
    count: (term) => term.messageCount,
  };
}

/** Memories saved further apart than this are not each other's context. */
const NEIGHBOUR_GAP_SECONDS = 3_600;

function splitContext(context: string): [string, number] {
  const space = context.lastIndexOf(' ');
  return [context.slice(0, space), Number(context.slice(space + 1))];
}

type SourceRow = {
  id: string;
  importance: number;
  length: number;
  speaker: string | null;
  day: string | null;
  held: number[] | null;
  phrase: boolean;
  /** The sequence the row is numbered in, and its number there. */
  sequence: string;
  position: string;
  /** What decides whether two adjacent rows are each other's context (Source.together). */
  context: string;
};

/**
 * Reads one source's candidates and the rows around the best of them (NEIGHBOUR_WEIGHTS.length
 * places each way in their sequence) into `rows`; every row learns its neighbours among them.
 */
async function readSource(
  db: Database,
  source: Source,
  search: LexicalSearch,
  parts: { unwanted: readonly string[] },
  terms: readonly Term[],
  averageLength: number,
  rows: Map<string, ContextRow & { importance: number }>,
): Promise<void> {
  const candidates = await chooseCandidates(db, source, search, parts, terms, averageLength);
  if (!candidates) return;
  const read = new Map<string, SourceRow>();
  const at = (sequence: string, position: bigint) => `${sequence}\u0000${position}`;
  for (const row of await readRows(db, source, search, parts, terms, candidates, averageLength)) {
    read.set(at(row.sequence, BigInt(row.position)), row);
  }
  for (const row of read.values()) {
    const neighbours = (step: bigint) => {
      const out: string[] = [];
      let previous = row;
      for (let distance = 1n; distance <= BigInt(NEIGHBOUR_WEIGHTS.length); distance++) {
        const next = read.get(at(row.sequence, BigInt(row.position) + step * distance));
        if (!next || !source.together(previous, next)) break;
        out.push(source.prefix + next.id);
        previous = next;
      }
      return out;
    };
    const key = source.prefix + row.id;
    if (rows.has(key)) continue;
    rows.set(key, {
      key,
      held: row.held ?? [],
      length: Number(row.length),
      speaker: row.speaker,
      day: row.day,
      phrase: row.phrase,
      before: neighbours(-1n),
      after: neighbours(1n),
      importance: Number(row.importance),
    });
  }
}

/** A tsquery operand matching any form of the term. */
const termQuery = (term: Term) => `(${term.lexemes.map(quoteLexeme).join(' | ')})`;

/** The SELECT list every read of a source shares: what a ContextRow needs. */
function rowColumns(
  source: Source,
  terms: readonly Term[],
  param: (value: unknown) => string,
  search: LexicalSearch,
) {
  const held = terms.map(
    (term, index) => `CASE WHEN m.search_vector @@ ${param(termQuery(term))}::tsquery THEN ${index} END`,
  );
  const phrase = phraseCondition(search, param);
  const tz = param(search.timeZone);
  return `m.id::text AS id, ${source.importance} AS importance, length(m.search_vector) AS length,
    ${source.speaker} AS speaker, to_char(${source.day(tz)}, 'YYYY-MM-DD') AS day,
    array_remove(ARRAY[${held.join(', ')}]::int[], NULL) AS held, ${phrase} AS phrase,
    ${source.sequence} AS sequence, m.position::text AS position, ${source.context} AS context`;
}

/** Whether `m` holds the query's `"exact phrases"` (false when it has none). */
function phraseCondition(search: LexicalSearch, param: (value: unknown) => string): string {
  return search.query.includes('"')
    ? `m.search_vector @@ websearch_to_tsquery('english', ${param(search.query)})`
    : 'false';
}

function unwantedCondition(parts: { unwanted: readonly string[] }, param: (value: unknown) => string) {
  return parts.unwanted.length > 0
    ? [`NOT (m.search_vector @@ to_tsquery('english', ${param(parts.unwanted.join(' | '))}))`]
    : [];
}

/**
 * Which rows to read as candidates: a tsquery over the terms' lexemes. Rows holding any term,
 * unless that is many (over PRUNED_ROWS); then max-score pruning: rows holding one of the rarest
 * terms, or enough of the common ones together, when the `enough`-th score among them is above
 * anything the other terms alone could reach (so the top `enough` are exact), and the rows
 * sharing only common words are never read. Null when the source holds no term.
 */
async function chooseCandidates(
  db: Database,
  source: Source,
  search: LexicalSearch,
  parts: { unwanted: readonly string[] },
  terms: readonly Term[],
  averageLength: number,
): Promise<string | null> {
  // A term far commoner than the query's rarest (a year every dated memory holds) adds next to
  // nothing: the rows holding only it are not worth reading. It still counts where it is held.
  const strongest = Math.max(...terms.map((term) => term.weight));
  const held = terms.filter((term) => source.count(term) > 0);
  const strong = held.filter((term) => term.weight >= NEGLIGIBLE_WEIGHT * strongest);
  // Unless the others hold too few rows to fill the results.
  const present = strong.reduce((sum, term) => sum + source.count(term), 0) >= search.enough ? strong : held;
  if (present.length === 0) return null;
  const operands = present.map(termQuery);
  const total = present.reduce((sum, term) => sum + source.count(term), 0);
  if (search.query.includes('"') || total <= PRUNED_ROWS) return operands.join(' | ');

  let essential = 0;
  for (
    let rows = 0;
    essential < present.length && rows + source.count(present[essential]!) <= PRUNED_ROWS;
  ) {
    rows += source.count(present[essential]!);
    essential++;
  }
  const rare = operands.slice(0, essential);
  const common = operands.slice(essential);
  const commonWeights = present.slice(essential).map((term) => term.weight);
  // With one common term, r = 2 reads the rare terms' rows alone.
  for (let r = Math.max(common.length, 2); r > 1; r--) {
    const groups = combinations(common, r);
    if (groups.length > MAX_GROUPS) break;
    if (groups.length === 0 && rare.length === 0) continue;
    const candidates = [...rare, ...groups.map((group) => `(${group.join(' & ')})`)].join(' | ');
    const floor = await scoreAt(db, source, search, parts, terms, candidates, averageLength);
    // commonWeights is sorted descending: the r - 1 largest come first.
    const bound = commonWeights.slice(0, r - 1).reduce((sum, weight) => sum + weight, 0) * MAX_LENGTH_FACTOR;
    if (floor !== undefined && floor > bound) return candidates;
  }
  return operands.join(' | ');
}

/** Every way to choose `size` of `items`, in order. */
function combinations<T>(items: readonly T[], size: number): T[][] {
  if (size === 0) return [[]];
  const out: T[][] = [];
  for (let index = 0; index + size <= items.length; index++) {
    for (const rest of combinations(items.slice(index + 1), size - 1)) out.push([items[index]!, ...rest]);
  }
  return out;
}

/** SQL pieces every read of a source's candidates shares: filters and the own-words score. */
function candidateSql(
  source: Source,
  search: LexicalSearch,
  parts: { unwanted: readonly string[] },
  terms: readonly Term[],
  candidates: string,
  averageLength: number,
  param: (value: unknown) => string,
) {
  // Values as parameters, never in the text: a query of the same shape reuses its prepared plan.
  const weights = terms.map(
    (term) =>
      `CASE WHEN m.search_vector @@ ${param(termQuery(term))}::tsquery THEN ${param(term.weight)}::float8 ELSE 0 END`,
  );
  const norm = `(${BM25_K1 + 1} / (${BM25_K1} * (${1 - BM25_B} + ${BM25_B} * length(m.search_vector) / ${param(Math.max(1, averageLength))}::float8) + 1))`;
  const where = [
    ...source.where,
    `m.search_vector @@ ${param(candidates)}::tsquery`,
    ...unwantedCondition(parts, param),
  ];
  return {
    score: `(${weights.join(' + ')}) * ${norm}`,
    where: where.join(' AND '),
    phrase: phraseCondition(search, param),
  };
}

/** The `enough`-th best own-words score among the candidates (undefined when fewer match). */
async function scoreAt(
  db: Database,
  source: Source,
  search: LexicalSearch,
  parts: { unwanted: readonly string[] },
  terms: readonly Term[],
  candidates: string,
  averageLength: number,
): Promise<number | undefined> {
  const params = [...source.params];
  const param = (value: unknown) => `$${params.push(value)}`;
  const sql = candidateSql(source, search, parts, terms, candidates, averageLength, param);
  const rows = await db.query<{ score: number }>(
    `SELECT ${sql.score} AS score FROM ${source.table} WHERE ${sql.where}
     ORDER BY score DESC LIMIT ${search.enough}`,
    params,
  );
  const floor = rows[search.enough - 1]?.score;
  return floor === undefined ? undefined : Number(floor);
}

/**
 * In one statement: the CANDIDATES best candidates by their own words, and the rows around the
 * best WITH_NEIGHBOURS of them in their sequence that pass the source's filters, each with the
 * columns a ContextRow needs (only those rows pay for the per-term matches).
 */
async function readRows(
  db: Database,
  source: Source,
  search: LexicalSearch,
  parts: { unwanted: readonly string[] },
  terms: readonly Term[],
  candidates: string,
  averageLength: number,
): Promise<SourceRow[]> {
  const params = [...source.params];
  const param = (value: unknown) => `$${params.push(value)}`;
  const sql = candidateSql(source, search, parts, terms, candidates, averageLength, param);
  const steps = Array.from({ length: NEIGHBOUR_WEIGHTS.length }, (_, index) => [-(index + 1), index + 1])
    .flat()
    .map((step) => `(${step})`)
    .join(', ');
  const columns = rowColumns(source, terms, param, search);
  // One JSON value rather than rows: PGlite decodes a value per column per row, which for a
  // hundred and more rows of ten columns costs more than the query itself.
  const [result] = await db.query<{ rows: SourceRow[] | null }>(
    `WITH ranked AS (
       SELECT m.id, ${source.sequence} AS sequence, m.position, ${sql.score} AS score, ${sql.phrase} AS phrase
       FROM ${source.table} WHERE ${sql.where}
       ORDER BY phrase DESC, score DESC, ${source.importance}::real DESC, m.id
       LIMIT ${CANDIDATES}
     ), around AS (
       SELECT DISTINCT best.sequence, best.position + step.d AS position
       FROM (SELECT * FROM ranked ORDER BY phrase DESC, score DESC, id LIMIT ${WITH_NEIGHBOURS}) best,
         (VALUES ${steps}) AS step(d)
     ), wanted AS (
       SELECT id FROM ranked
       UNION
       -- As arrays, not a join: a plan that cannot go wrong without table statistics (the pairs
       -- match as sets; a row at one of the positions in another of the sequences does no harm).
       SELECT m.id FROM ${source.table}
       WHERE ${[...source.where, ...unwantedCondition(parts, param)].join(' AND ')}
         ${source.oneSequence ? '' : `AND ${source.sequence} = ANY(ARRAY(SELECT DISTINCT sequence FROM around))`}
         AND m.position = ANY(ARRAY(SELECT DISTINCT position FROM around))
     )
     SELECT json_agg(found) AS rows
     FROM (SELECT ${columns} FROM wanted JOIN ${source.table} ON m.id = wanted.id) found`,
    params,
  );
  return result?.rows ?? [];
}

/** A lexeme as a tsquery operand, taken literally (it is already stemmed). */
function quoteLexeme(lexeme: string): string {
  return `'${lexeme.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}
