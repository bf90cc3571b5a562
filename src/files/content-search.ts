import type { Queryable } from '../db/index.ts';
import { SHARED_OWNER } from './content-index.ts';

export type ContentScope = 'files' | 'skills' | 'all';

export type ContentMatch = {
  source: 'vault' | 'skill';
  /** A vault path, or a skill name. */
  path: string;
  kind: string;
  /** A short passage with each match wrapped in `**`. */
  snippet: string;
  rank: number;
  note: string | null;
};

type MatchRow = {
  source: 'vault' | 'skill';
  path: string;
  kind: string;
  snippet: string | null;
  rank: number;
  note: string | null;
};

// Matches are wrapped in ** (markdown bold): readable in every channel and by the model.
const HEADLINE =
  'StartSel=**, StopSel=**, MaxWords=28, MinWords=12, ShortWord=2, MaxFragments=2, FragmentDelimiter=" … "';

/**
 * Full-text search over one user's files (and, by scope, the skill pages), best first:
 * title matches outrank heading matches, which outrank body matches. A user's rows are only
 * ever read with that user's id.
 */
export async function searchContent(
  db: Queryable,
  userId: string,
  query: string,
  options: { scope?: ContentScope; limit?: number } = {},
): Promise<ContentMatch[]> {
  const scope = options.scope ?? 'files';
  const owners = scope === 'skills' ? [SHARED_OWNER] : scope === 'all' ? [userId, SHARED_OWNER] : [userId];
  const sources = scope === 'files' ? ['vault'] : scope === 'skills' ? ['skill'] : ['vault', 'skill'];
  const rows = await db.query<MatchRow>(
    `WITH q AS (SELECT websearch_to_tsquery('english', $3) AS query),
     hits AS (
       SELECT c.id, ts_rank_cd(c.search_vector, q.query, 1) AS rank
       FROM content_index c, q
       WHERE c.user_id = ANY($1::text[]) AND c.source = ANY($2::text[]) AND c.search_vector @@ q.query
       ORDER BY rank DESC, c.path
       LIMIT $4
     )
     SELECT c.source, c.path, c.kind, c.note, hits.rank,
       ts_headline('english', CASE WHEN c.body <> '' THEN c.body ELSE c.title END, q.query, '${HEADLINE}') AS snippet
     FROM hits JOIN content_index c ON c.id = hits.id, q
     ORDER BY hits.rank DESC, c.path`,
    [owners, sources, query, options.limit ?? 10],
  );
  return rows.map((row) => ({
    source: row.source,
    path: row.path,
    kind: row.kind,
    snippet: tidy(row.snippet ?? ''),
    rank: Number(row.rank),
    note: row.note,
  }));
}

/** How many of a user's files are indexed (diagnostics and tests). */
export async function indexedCount(db: Queryable, userId: string): Promise<number> {
  const rows = await db.query<{ count: number }>(
    `SELECT count(*)::int AS count FROM content_index WHERE user_id = $1 AND source = 'vault'`,
    [userId],
  );
  return rows[0]?.count ?? 0;
}

const tidy = (snippet: string) => snippet.replace(/\s+/g, ' ').trim();
