import type { Database } from '../../db/index.ts';

/*
 * Approximate nearest-neighbour search over memory embeddings. memory_embeddings.embedding is
 * a `vector` of any dimension (any embeddings model works), and HNSW needs fixed dimensions:
 * so there is one partial HNSW index per dimension count in use, on the expression
 * `embedding::vector(d)` WHERE vector_dims(embedding) = d. A background job builds them (never
 * the request path); until one exists, search scans exactly.
 */

/** Below this many embeddings of one dimension count an exact scan is fast enough: no index. */
export const VECTOR_INDEX_MIN_ROWS = 5_000;
/** The most dimensions pgvector's HNSW accepts for `vector`. */
const HNSW_MAX_DIMENSIONS = 2_000;

export function vectorIndexName(dimensions: number): string {
  return `memory_embeddings_hnsw_${Math.trunc(dimensions)}`;
}

export type BuiltVectorIndex = { dimensions: number; rows: number; name: string };

/**
 * The vector-index job: builds the missing HNSW index of each dimension count with at least
 * `minRows` embeddings (cosine distance, m = 16, ef_construction = 64) and returns those built.
 * Does nothing without pgvector. Idempotent; safe to run on every schedule tick.
 */
export async function buildVectorIndexes(
  db: Database,
  options: { minRows?: number } = {},
): Promise<BuiltVectorIndex[]> {
  if (!db.hasVector) return [];
  const minRows = options.minRows ?? VECTOR_INDEX_MIN_ROWS;
  const counts = await db.query<{ dimensions: number; rows: number }>(
    `SELECT vector_dims(embedding) AS dimensions, count(*)::int AS rows
     FROM memory_embeddings GROUP BY 1 HAVING count(*) >= $1 ORDER BY 1`,
    [minRows],
  );
  const built: BuiltVectorIndex[] = [];
  for (const { dimensions, rows } of counts) {
    const d = Math.trunc(Number(dimensions));
    if (!(d > 0 && d <= HNSW_MAX_DIMENSIONS)) continue;
    const name = vectorIndexName(d);
    if (await hasIndex(db, name)) continue;
    // The server builds with this much memory; the default (64 MB) spills to a slower build at 100k.
    await db.transaction(async (tx) => {
      await tx.query("SET LOCAL maintenance_work_mem = '256MB'");
      await tx.query(
        `CREATE INDEX IF NOT EXISTS ${name} ON memory_embeddings
         USING hnsw ((embedding::vector(${d})) vector_cosine_ops) WITH (m = 16, ef_construction = 64)
         WHERE vector_dims(embedding) = ${d}`,
      );
    });
    knownIndexes.get(db)?.set(d, { rows: Number(rows), checkedAt: Date.now() });
    built.push({ dimensions: d, rows: Number(rows), name });
  }
  return built;
}

async function hasIndex(db: Database, name: string): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM pg_indexes WHERE indexname = $1', [name]);
  return rows.length > 0;
}

/** How long search trusts what it read of an index (its absence, its size) before asking the catalog again. */
const RECHECK_MS = 30_000;
const knownIndexes = new WeakMap<Database, Map<number, { rows: number; checkedAt: number }>>();

/**
 * The rows the HNSW index for `dimensions` holds, as the catalog estimates them (refreshed by
 * VACUUM and ANALYZE); 0 when there is no index. Cached per database for 30 s.
 */
export async function vectorIndexRows(db: Database, dimensions: number): Promise<number> {
  let known = knownIndexes.get(db);
  if (!known) {
    known = new Map();
    knownIndexes.set(db, known);
  }
  const cached = known.get(dimensions);
  if (cached && Date.now() - cached.checkedAt < RECHECK_MS) return cached.rows;
  const found = await db.query<{ rows: number }>(
    `SELECT greatest(c.reltuples, 1)::float8 AS rows FROM pg_class c
     WHERE c.relname = $1 AND c.relkind = 'i'`,
    [vectorIndexName(dimensions)],
  );
  const rows = Number(found[0]?.rows ?? 0);
  known.set(dimensions, { rows, checkedAt: Date.now() });
  return rows;
}
