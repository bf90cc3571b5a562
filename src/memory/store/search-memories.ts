import type { Database } from '../../db/index.ts';
import { errorMessage } from '../../errors.ts';
import { type FoundMessage, loadFoundMessages } from './found-messages.ts';
import { type LexicalHit, lexicalRanking, type MemoryFilters } from './lexical-search.ts';
import { MEMORY_COLUMNS, toMemory, vectorLiteral } from './rows.ts';
import { normalizeTags } from './text.ts';
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

/** What a recall search reads: saved memories, past conversations (stored messages), or both. */
export const RECALL_SOURCES = ['all', 'memories', 'messages'] as const;
export type RecallSource = (typeof RECALL_SOURCES)[number];

export type RecallSearch = MemorySearch & {
  /** Default `all`. Memory filters (tags, category, importance) leave messages out. */
  source?: RecallSource;
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

export type RecallHit =
  | ({ kind: 'memory' } & MemorySearchHit)
  | { kind: 'message'; message: FoundMessage; score: number; ftsRank: number };

export type MemorySearchResult = {
  results: MemorySearchHit[];
  mode: 'hybrid' | 'full_text';
  /** In `full_text` mode: why vectors were not used, in words a user can act on. */
  fullTextReason?: string;
};

export type RecallSearchResult = Omit<MemorySearchResult, 'results'> & {
  results: RecallHit[];
  /** Whether messages were searched (not when the source or a memory filter left them out). */
  searchedMessages: boolean;
};

export type SearchMemoriesOptions = {
  /** Embeds the query; without it the search is full text only. */
  embedder?: QueryEmbedder;
  signal?: AbortSignal;
  /** Written to `accessed_at` of the memories returned, and what "last week" is measured from (default: now). */
  now?: Date;
  /** The user's time zone, for the days a query names ("yesterday") and a message's day (default UTC). */
  timeZone?: string;
  /** Messages of this turn are not searched: they are the question being asked. */
  excludeTurnId?: string | null;
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
 * Searches the user's memories (never archived ones): ranked by their words read with their
 * context, who said them and when (lexical-search.ts, context-ranking.ts) and, where the
 * database has pgvector, an embedder is given and the user's memories are embedded with the
 * same model, by vector similarity; the two rankings are fused (RRF, k = 60) and weighted by
 * importance. Marks the memories returned as accessed. Embedding failures do not fail the
 * search: it falls back to full text and says why.
 */
export async function searchMemories(
  db: Database,
  userId: string,
  search: MemorySearch,
  options: SearchMemoriesOptions = {},
): Promise<MemorySearchResult> {
  const found = await searchRecall(db, userId, { ...search, source: 'memories' }, options);
  const results = found.results.flatMap((hit) => {
    if (hit.kind !== 'memory') return [];
    const { kind: _, ...memoryHit } = hit;
    return [memoryHit];
  });
  return found.mode === 'hybrid'
    ? { results, mode: 'hybrid' }
    : { results, mode: 'full_text', fullTextReason: found.fullTextReason };
}

/**
 * searchMemories over memories, the user's stored messages (what was said in past
 * conversations, user and assistant turns) or both, with one ranking: a message is read with
 * the messages around it, as a memory with the memories saved around it. Vectors (memories
 * only) are fused in as in searchMemories. Only `userId`'s memories and messages are read.
 */
export async function searchRecall(
  db: Database,
  userId: string,
  search: RecallSearch,
  options: SearchMemoriesOptions = {},
): Promise<RecallSearchResult> {
  const limit = Math.min(Math.max(Math.trunc(search.limit ?? 10), 1), MAX_SEARCH_LIMIT);
  const source = search.source ?? 'all';
  const filters = buildFilters(userId, search);
  const memoryOnly = filters.where.length > 2;
  const withMemories = source !== 'messages';
  const withMessages = source !== 'memories' && !memoryOnly;
  const query = search.query.trim();
  const now = options.now ?? new Date();

  // The query's embedding call overlaps the full-text query.
  const [fullText, vectors] = await Promise.all([
    lexicalRanking(db, {
      userId,
      query,
      memories: withMemories ? filters : null,
      messages: withMessages ? { excludeTurnId: options.excludeTurnId } : null,
      enough: limit,
      now,
      timeZone: options.timeZone ?? 'UTC',
    }),
    withMemories
      ? vectorRanking(db, userId, filters, query, options)
      : Promise.resolve<VectorRanking>({ ok: false, reason: 'only messages were searched' }),
  ]);
  options.signal?.throwIfAborted();
  const ranked = fuseRankings(fullText, vectors.ok ? vectors.ranking : []).slice(0, limit);

  const memoryIds = ranked.filter((hit) => hit.kind === 'memory').map((hit) => hit.id);
  const messageIds = ranked.filter((hit) => hit.kind === 'message').map((hit) => hit.id);
  const [memories, messages] = await Promise.all([
    options.touch === false ? loadMemories(db, userId, memoryIds) : touchMemories(db, userId, memoryIds, now),
    loadFoundMessages(db, userId, messageIds),
  ]);
  const results: RecallHit[] = [];
  for (const hit of ranked) {
    if (hit.kind === 'message') {
      const message = messages.get(hit.id);
      if (message) results.push({ kind: 'message', message, score: hit.score, ftsRank: hit.ftsRank ?? 0 });
      continue;
    }
    const memory = memories.get(hit.id);
    if (!memory) continue;
    const result: RecallHit = { kind: 'memory', memory, score: hit.score };
    if (hit.ftsRank) result.ftsRank = hit.ftsRank;
    if (hit.vectorRank) result.vectorRank = hit.vectorRank;
    results.push(result);
  }
  const searchedMessages = withMessages;
  return vectors.ok
    ? { results, mode: 'hybrid', searchedMessages }
    : { results, mode: 'full_text', fullTextReason: vectors.reason, searchedMessages };
}

type RankedRow = { id: string; importance: number };
type FusedHit = {
  kind: 'memory' | 'message';
  id: string;
  importance: number;
  score: number;
  ftsRank?: number;
  vectorRank?: number;
};

/** Reciprocal rank fusion of the two rankings, × (0.5 + importance); best first. */
function fuseRankings(fullText: readonly LexicalHit[], vector: readonly RankedRow[]): FusedHit[] {
  const hits = new Map<string, FusedHit>();
  const hitFor = (kind: FusedHit['kind'], row: RankedRow) => {
    const key = `${kind}:${row.id}`;
    const hit = hits.get(key) ?? { kind, id: row.id, importance: row.importance, score: 0 };
    hits.set(key, hit);
    return hit;
  };
  for (const [index, row] of fullText.entries()) hitFor(row.kind, row).ftsRank = index + 1;
  for (const [index, row] of vector.entries()) hitFor('memory', row).vectorRank = index + 1;
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
type Filters = MemoryFilters;

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

/**
 * accessed_at is rewritten at most this often per memory: decay counts in days, and a memory
 * read again within the hour (saved moments ago, or found on each turn of a conversation) is
 * spared the write, which for a full table page is a new row version in every index.
 */
const TOUCH_INTERVAL_SECONDS = 3_600;

/**
 * Sets accessed_at of the user's live memories `ids` (unless it is within TOUCH_INTERVAL_SECONDS
 * of `now` already) and returns them by id.
 */
export async function touchMemories(
  db: Database,
  userId: string,
  ids: readonly string[],
  now: Date,
): Promise<Map<string, Memory>> {
  if (ids.length === 0) return new Map();
  // The SELECT reads the rows as they were before the UPDATE: `touched` says which it changed.
  const rows = await db.query(
    `WITH touched AS (
       UPDATE memory_entries m SET accessed_at = $3
       WHERE m.user_id = $1 AND m.id = ANY($2::text[]) AND m.archived_at IS NULL
         AND m.accessed_at < $3::timestamptz - make_interval(secs => $4)
       RETURNING m.id
     )
     SELECT ${MEMORY_COLUMNS}, m.id IN (SELECT id FROM touched) AS touched FROM memory_entries m
     WHERE m.user_id = $1 AND m.id = ANY($2::text[]) AND m.archived_at IS NULL`,
    [userId, [...ids], now, TOUCH_INTERVAL_SECONDS],
  );
  return new Map(
    rows.map((row) => [String(row.id), toMemory(row.touched ? { ...row, accessed_at: now } : row)]),
  );
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
