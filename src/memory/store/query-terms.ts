import type { Database } from '../../db/index.ts';
import { type RankingTerm, termWeight } from './context-ranking.ts';

/** A query term with its document counts in each source. */
export type Term = RankingTerm & { memoryCount: number; messageCount: number };

/**
 * The names a query may give for who said something: its capitalized words, alone and in pairs
 * ("Mary Ann"), lowercased as speakers are stored. A lowercase word is not taken for a name, so
 * "book me flights" never matches a note saved as "Flights: …".
 */
function speakerNames(query: string): string[] {
  const capitalized = (query.match(/[\p{L}'’-]+/gu) ?? [])
    .map((word) => word.replace(/['’]s$/u, ''))
    .filter((word) => /^\p{Lu}/u.test(word));
  const lower = capitalized.map((word) => word.toLowerCase());
  return [...new Set([...lower, ...lower.slice(1).map((word, index) => `${lower[index]} ${word}`)])];
}

export type Analysed = {
  terms: Term[];
  speakers: Set<string>;
  averageLength: number;
  memoryDocs: number;
  messageDocs: number;
};

/**
 * The query's terms (each query lexeme with its word forms), their document counts in each
 * source, the user's document counts and lengths, and which query words name a speaker — in one
 * round trip. Terms no searched text holds are dropped. Null when nothing can match.
 */
export async function analyseQuery(
  db: Database,
  search: {
    userId: string;
    query: string;
    /** Which sources are searched (truthy: yes). */
    memories: unknown;
    messages: unknown;
  },
  words: readonly string[],
): Promise<Analysed | null> {
  const names = speakerNames(search.query);
  const [result] = await db.query<{
    rows: Array<{
      ord: number;
      base: string | null;
      lexeme: string | null;
      memory_df: number;
      message_df: number;
      memory_docs: number | null;
      memory_length: number | null;
      message_docs: number | null;
      message_length: number | null;
      speakers: string[] | null;
    }>;
  }>(
    // The arrays are read through `(SELECT $n)`, so the planner estimates them the same whatever
    // they hold: the prepared statement then keeps one generic plan, where estimating each call's
    // arrays made it plan the whole statement again for every query.
    `WITH words AS (
       SELECT x.word, x.ord FROM unnest((SELECT $2::text[])) WITH ORDINALITY AS x(word, ord)
     ), query_lexemes AS (
       SELECT DISTINCT ON (t.lexeme) w.ord, t.lexeme FROM words w, unnest(to_tsvector('english', w.word)) t
       ORDER BY t.lexeme, w.ord
     ), expanded AS (
       SELECT q.ord, q.lexeme AS base, q.lexeme FROM query_lexemes q
       UNION
       -- A primary-key probe per query lexeme (a subquery, so never a scan of every form).
       SELECT q.ord, q.lexeme, unnest((SELECT forms FROM word_forms WHERE lexeme = q.lexeme))
       FROM query_lexemes q
     ), totals AS (
       SELECT
         (SELECT doc_count FROM memory_user_stats WHERE user_id = $1) AS memory_docs,
         (SELECT total_length FROM memory_user_stats WHERE user_id = $1) AS memory_length,
         (SELECT doc_count FROM message_user_stats WHERE user_id = $1) AS message_docs,
         (SELECT total_length FROM message_user_stats WHERE user_id = $1) AS message_length,
         -- One index probe per name (LIMIT 1 keeps the planner from hashing all the user's
         -- speakers, which it does without table statistics, as after a large import).
         ARRAY(
           SELECT n.name FROM unnest((SELECT $3::text[])) AS n(name)
           WHERE (SELECT true FROM memory_entries WHERE user_id = $1 AND speaker = n.name LIMIT 1)
             OR (SELECT true FROM messages WHERE user_id = $1 AND lower(speaker) = n.name LIMIT 1)
         ) AS speakers
     )
     SELECT json_agg(found ORDER BY found.ord, found.base, found.lexeme) AS rows FROM (
       SELECT e.ord, e.base, e.lexeme,
         COALESCE((SELECT doc_count FROM memory_term_stats WHERE user_id = $1 AND term = e.lexeme), 0) AS memory_df,
         COALESCE((SELECT doc_count FROM message_term_stats WHERE user_id = $1 AND term = e.lexeme), 0) AS message_df,
         totals.*
       FROM totals LEFT JOIN expanded e ON true
     ) found`,
    [search.userId, [...words], names],
  );
  const rows = result?.rows ?? [];
  const first = rows[0];
  if (!first) return null;
  const memoryDocs = search.memories ? Number(first.memory_docs ?? 0) : 0;
  const messageDocs = search.messages ? Number(first.message_docs ?? 0) : 0;
  const documents = memoryDocs + messageDocs;
  if (documents <= 0) return null;
  const totalLength =
    (search.memories ? Number(first.memory_length ?? 0) : 0) +
    (search.messages ? Number(first.message_length ?? 0) : 0);
  const speakers = new Set(first.speakers ?? []);

  const byBase = new Map<string, { lexemes: string[]; memoryCount: number; messageCount: number }>();
  for (const row of rows) {
    if (row.base === null || row.lexeme === null) continue;
    const term = byBase.get(row.base) ?? { lexemes: [], memoryCount: 0, messageCount: 0 };
    byBase.set(row.base, term);
    term.lexemes.push(row.lexeme);
    term.memoryCount += Number(row.memory_df);
    term.messageCount += Number(row.message_df);
  }
  const seen = new Set<string>();
  const terms: Term[] = [];
  for (const term of byBase.values()) {
    const lexemes = [...new Set(term.lexemes)].sort();
    const key = lexemes.join(' ');
    if (seen.has(key)) continue;
    seen.add(key);
    // Forms of a group overlap little: their summed counts stand for the group's.
    const memoryCount = search.memories ? term.memoryCount : 0;
    const messageCount = search.messages ? term.messageCount : 0;
    const count = Math.min(documents, memoryCount + messageCount);
    if (count <= 0) continue;
    terms.push({ lexemes, memoryCount, messageCount, weight: termWeight(documents, count) });
  }
  if (terms.length === 0) return null;
  // Rarest first; ties by lexemes, so the same query always runs the same SQL.
  terms.sort((a, b) => b.weight - a.weight || (a.lexemes.join() < b.lexemes.join() ? -1 : 1));
  return {
    terms,
    speakers,
    averageLength: Math.max(1, totalLength / documents),
    memoryDocs,
    messageDocs,
  };
}
