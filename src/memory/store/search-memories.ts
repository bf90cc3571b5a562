import type { Database } from '../../db/index.ts';
import { errorMessage } from '../../errors.ts';
import { MEMORY_COLUMNS, toMemory, vectorLiteral } from './rows.ts';
import { normalizeTags, type QueryParts, queryParts } from './text.ts';
import type { Memory, MemoryCategory, QueryEmbedder } from './types.ts';
import { vectorIndexRows } from './vector-index.ts';

export type MemorySearch = {
  /** Natural language; web-search syntax (`"exact phrase"`, `-word`) is honoured. */
  query: string;
  /** A memory must carry at least one of them. */
  tags?: readonly string[];
  category?: MemoryCategory;
  minImportance?: number;
  /** 1..20, default 10. */
  limit?: number;
};

export type MemorySearchHit = {
  memory: Memory;
  /** Reciprocal rank fusion × (0.5 + importance); higher is better. */
  score: number;
  /** 1-based position in the full-text ranking, when full text found it. */
  ftsRank?: number;
  /** 1-based position in the vector ranking, when vectors found it. */
  vectorRank?: number;
};

export type MemorySearchResult = {
  results: MemorySearchHit[];
  mode: 'hybrid' | 'full_text';
  /** In `full_text` mode: why vectors were not used, in words a user can act on. */
  fullTextReason?: string;
};

export type SearchMemoriesOptions = {
  /** Embeds the query; without it the search is full text only. */
  embedder?: QueryEmbedder;
  signal?: AbortSignal;
  /** Written to `accessed_at` of the memories returned (default: the current time). */
  now?: Date;
  /**
   * Vector matches below this cosine similarity are ignored, so a query unlike every memory
   * returns nothing rather than the least unlike. Default 0.2, which suits OpenAI-style
   * embeddings (unrelated texts score below it); models with a higher floor need more.
   */
  minSimilarity?: number;
  /** Set accessed_at of the memories returned (default true). */
  touch?: boolean;
  /** Use the HNSW index when the vector-index job has built one (default true); false scans exactly. */
  approximate?: boolean;
};

export const MAX_SEARCH_LIMIT = 20;
/** How deep each ranking is read before fusion. */
const CANDIDATES = 50;
/** Reciprocal rank fusion constant (Cormack et al.). */
const RRF_K = 60;

/**
 * Searches the user's memories (never archived ones) by full text and, where the database
 * has pgvector, an embedder is given and the user's memories are embedded with the same
 * model, by vector similarity; the two rankings are fused (RRF, k = 60) and weighted by
 * importance. Marks the memories returned as accessed. Embedding failures do not fail the
 * search: it falls back to full text and says why.
 */
export async function searchMemories(
  db: Database,
  userId: string,
  search: MemorySearch,
  options: SearchMemoriesOptions = {},
): Promise<MemorySearchResult> {
  const limit = Math.min(Math.max(Math.trunc(search.limit ?? 10), 1), MAX_SEARCH_LIMIT);
  const filters = buildFilters(userId, search);
  const query = search.query.trim();

  // The query's embedding call overlaps the full-text query.
  const [fullText, vectors] = await Promise.all([
    fullTextRanking(db, filters, query, limit),
    vectorRanking(db, userId, filters, query, options),
  ]);
  options.signal?.throwIfAborted();
  const ranked = fuseRankings(fullText, vectors.ok ? vectors.ranking : []).slice(0, limit);

  const ids = ranked.map((hit) => hit.id);
  const memories =
    options.touch === false
      ? await loadMemories(db, userId, ids)
      : await touchMemories(db, userId, ids, options.now ?? new Date());
  const results: MemorySearchHit[] = [];
  for (const hit of ranked) {
    const memory = memories.get(hit.id);
    if (!memory) continue;
    const result: MemorySearchHit = { memory, score: hit.score };
    if (hit.ftsRank) result.ftsRank = hit.ftsRank;
    if (hit.vectorRank) result.vectorRank = hit.vectorRank;
    results.push(result);
  }
  return vectors.ok
    ? { results, mode: 'hybrid' }
    : { results, mode: 'full_text', fullTextReason: vectors.reason };
}

type RankedRow = { id: string; importance: number };
type FusedHit = { id: string; importance: number; score: number; ftsRank?: number; vectorRank?: number };

/** Reciprocal rank fusion of the two rankings, × (0.5 + importance); best first. */
function fuseRankings(fullText: readonly RankedRow[], vector: readonly RankedRow[]): FusedHit[] {
  const hits = new Map<string, FusedHit>();
  const hitFor = (row: RankedRow) => {
    const hit = hits.get(row.id) ?? { id: row.id, importance: row.importance, score: 0 };
    hits.set(row.id, hit);
    return hit;
  };
  for (const [index, row] of fullText.entries()) hitFor(row).ftsRank = index + 1;
  for (const [index, row] of vector.entries()) hitFor(row).vectorRank = index + 1;
  for (const hit of hits.values()) {
    const rrf =
      (hit.ftsRank ? 1 / (RRF_K + hit.ftsRank) : 0) + (hit.vectorRank ? 1 / (RRF_K + hit.vectorRank) : 0);
    hit.score = rrf * (0.5 + hit.importance);
  }
  // Equal scores: the better full-text rank, then the id, so results never shuffle between calls.
  return [...hits.values()].sort(
    (a, b) =>
      b.score - a.score ||
      (a.ftsRank ?? Number.POSITIVE_INFINITY) - (b.ftsRank ?? Number.POSITIVE_INFINITY) ||
      (a.id < b.id ? -1 : 1),
  );
}

/** The conditions both rankings share, over `memory_entries m`, and their parameters ($1 = user). */
type Filters = { params: readonly unknown[]; where: readonly string[] };

function buildFilters(userId: string, search: MemorySearch): Filters {
  const params: unknown[] = [userId];
  const param = (value: unknown) => `$${params.push(value)}`;
  const where = ['m.user_id = $1', 'm.archived_at IS NULL'];
  const tags = normalizeTags(search.tags ?? []);
  if (tags.length > 0) where.push(`m.tags && ${param(tags)}::text[]`);
  if (search.category) where.push(`m.category = ${param(search.category)}`);
  // `real` holds 0.7 as 0.69999…: compare as real, or --min-importance 0.7 misses 0.7.
  if (search.minImportance !== undefined && search.minImportance > 0) {
    where.push(`m.importance >= ${param(search.minImportance)}::real`);
  }
  return { params, where };
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

const NOT_CONFIGURED = 'no embedding model is configured';

type VectorRanking = { ok: true; ranking: RankedRow[] } | { ok: false; reason: string };

async function vectorRanking(
  db: Database,
  userId: string,
  filters: Filters,
  query: string,
  options: SearchMemoriesOptions,
): Promise<VectorRanking> {
  if (!db.hasVector) {
    return { ok: false, reason: 'the vector extension (pgvector) is not installed in this database' };
  }
  if (!options.embedder || options.embedder.configured?.() === false) {
    return { ok: false, reason: NOT_CONFIGURED };
  }
  if (!query) return { ok: false, reason: 'the query is empty' };
  // Spare the embeddings call when nothing could match it.
  const embedded = await db.query<{ embedding_model: string }>(
    `SELECT m.embedding_model FROM memory_entries m
     WHERE m.user_id = $1 AND m.archived_at IS NULL AND m.embedded_at IS NOT NULL LIMIT 1`,
    [userId],
  );
  if (embedded.length === 0) return { ok: false, reason: 'no memories are embedded yet' };

  let embedding: { vector: number[]; model: string } | null;
  try {
    embedding = await options.embedder(query, options.signal);
  } catch (error) {
    options.signal?.throwIfAborted();
    return { ok: false, reason: `embedding the query failed (${errorMessage(error)})` };
  }
  if (!embedding) return { ok: false, reason: NOT_CONFIGURED };
  const { vector, model } = embedding;
  if (vector.length === 0 || !vector.every(Number.isFinite)) {
    return { ok: false, reason: `the ${model} embedding of the query is not a usable vector` };
  }
  if (embedded[0]?.embedding_model !== model) {
    const same = await db.query(
      `SELECT 1 FROM memory_entries m
       WHERE m.user_id = $1 AND m.archived_at IS NULL AND m.embedded_at IS NOT NULL AND m.embedding_model = $2
       LIMIT 1`,
      [userId, model],
    );
    if (same.length === 0) return { ok: false, reason: `no memories are embedded with ${model} yet` };
  }

  const rows = await nearestRows(db, filters, vector, model, options.approximate !== false);
  const maxDistance = 1 - (options.minSimilarity ?? 0.2);
  return {
    ok: true,
    ranking: rows
      .filter((row) => row.distance !== null && Number(row.distance) <= maxDistance)
      .map((row) => ({ id: row.id, importance: Number(row.importance) })),
  };
}

type NearRow = { id: string; importance: number; distance: number | null };

/**
 * The CANDIDATES memories nearest to `vector` among the filtered ones embedded with `model`.
 * With `approximate`, an HNSW index for the vector's dimensions (vector-index.ts) and a user it
 * pays for (useVectorIndex), an index scan with pgvector's iterative scan (which keeps reading
 * the graph until enough rows pass the filters); when it finds fewer than CANDIDATES (a filter
 * that few memories pass), the exact scan answers instead.
 */
async function nearestRows(
  db: Database,
  filters: Filters,
  vector: readonly number[],
  model: string,
  approximate: boolean,
): Promise<NearRow[]> {
  const params = [...filters.params];
  const modelParam = `$${params.push(model)}`;
  const literal = vectorLiteral(vector);
  const where = [...filters.where, 'm.embedded_at IS NOT NULL', `m.embedding_model = ${modelParam}`];
  const dimensions = vector.length;
  if (approximate && (await useVectorIndex(db, String(filters.params[0]), dimensions))) {
    // Dimensions inline (a number): the planner must see the partial index's predicate and expression.
    const distance = `e.embedding::vector(${dimensions}) <=> $${params.push(literal)}::vector(${dimensions})`;
    const rows = await db.transaction(async (tx) => {
      await tx.query("SET LOCAL hnsw.iterative_scan = 'relaxed_order'");
      await tx.query(`SET LOCAL hnsw.ef_search = ${HNSW_EF_SEARCH}`);
      return tx.query<NearRow>(
        `SELECT m.id, m.importance, ${distance} AS distance
         FROM memory_embeddings e JOIN memory_entries m ON m.id = e.memory_id
         WHERE vector_dims(e.embedding) = ${dimensions} AND ${where.join(' AND ')}
         ORDER BY ${distance}
         LIMIT ${CANDIDATES}`,
        params,
      );
    });
    if (rows.length >= CANDIDATES) {
      // relaxed_order may return neighbours slightly out of order.
      return rows.sort((x, y) => Number(x.distance) - Number(y.distance) || (x.id < y.id ? -1 : 1));
    }
    params.pop();
  }
  const dimsParam = `$${params.push(dimensions)}`;
  const vectorParam = `$${params.push(literal)}::vector`;
  // Dimensions are checked in the CASE, not in WHERE: as a filter the planner misjudges it and
  // picks a nested loop that is 4× slower at 100k memories.
  return db.query<NearRow>(
    `SELECT m.id, m.importance,
       CASE WHEN vector_dims(e.embedding) = ${dimsParam} THEN e.embedding <=> ${vectorParam} END AS distance
     FROM memory_embeddings e JOIN memory_entries m ON m.id = e.memory_id
     WHERE ${where.join(' AND ')}
     ORDER BY distance NULLS LAST, m.id
     LIMIT ${CANDIDATES}`,
    params,
  );
}

/**
 * An index tuple read by the iterative scan costs about this many rows of the exact scan
 * (measured on PGlite at 100k memories: ~16 µs against ~2 µs).
 */
const INDEX_TUPLE_COST = 8;

/**
 * Whether the HNSW index beats the exact scan for this user. The index holds every user's
 * memories: to find a user's CANDIDATES nearest, the iterative scan reads about CANDIDATES ×
 * indexRows / userRows index tuples, where the exact scan reads the user's rows once. So a user
 * with few memories in a large index is scanned exactly (a 300-memory user in a 100k index:
 * ~5 ms instead of the ~300 ms of an index scan that finds too few and falls back anyway).
 */
async function useVectorIndex(db: Database, userId: string, dimensions: number): Promise<boolean> {
  const indexRows = await vectorIndexRows(db, dimensions);
  if (indexRows === 0) return false;
  const stats = await db.query<{ doc_count: number }>(
    'SELECT doc_count FROM memory_user_stats WHERE user_id = $1',
    [userId],
  );
  const userRows = Number(stats[0]?.doc_count ?? 0);
  return userRows * userRows >= INDEX_TUPLE_COST * CANDIDATES * indexRows;
}

/**
 * HNSW candidate list size per scan step. On clustered vectors (as embeddings are) recall@10
 * against the exact scan is ~1.0 from 40 up; on structureless uniform vectors, the worst case,
 * 200 reaches 0.85 at 100k and 500 0.96, at ~3 ms more per lookup on the clustered set too
 * (bench/memory-search.bench.ts).
 */
const HNSW_EF_SEARCH = 200;

/**
 * Ids of the user's live memories embedded with `model` nearest to `vector`, best first (at
 * most 50): what the vector side of a hybrid search reads. `approximate: false` forces the
 * exact scan (the bench compares the two).
 */
export async function nearestMemoryIds(
  db: Database,
  userId: string,
  vector: readonly number[],
  model: string,
  options: { approximate?: boolean } = {},
): Promise<string[]> {
  const rows = await nearestRows(
    db,
    buildFilters(userId, { query: '' }),
    vector,
    model,
    options.approximate !== false,
  );
  return rows.filter((row) => row.distance !== null).map((row) => row.id);
}

/** Sets accessed_at of the user's live memories `ids` and returns them by id. */
export async function touchMemories(
  db: Database,
  userId: string,
  ids: readonly string[],
  now: Date,
): Promise<Map<string, Memory>> {
  if (ids.length === 0) return new Map();
  const rows = await db.query(
    `UPDATE memory_entries m SET accessed_at = $3
     WHERE m.user_id = $1 AND m.id = ANY($2::text[]) AND m.archived_at IS NULL
     RETURNING ${MEMORY_COLUMNS}`,
    [userId, [...ids], now],
  );
  return new Map(rows.map((row) => [String(row.id), toMemory(row)]));
}

async function loadMemories(
  db: Database,
  userId: string,
  ids: readonly string[],
): Promise<Map<string, Memory>> {
  if (ids.length === 0) return new Map();
  const rows = await db.query(
    `SELECT ${MEMORY_COLUMNS} FROM memory_entries m
     WHERE m.user_id = $1 AND m.id = ANY($2::text[]) AND m.archived_at IS NULL`,
    [userId, [...ids]],
  );
  return new Map(rows.map((row) => [String(row.id), toMemory(row)]));
}
