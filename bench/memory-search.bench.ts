import { randomUUID } from 'node:crypto';
import { type Database, migrate, openPglite, openPostgres } from '../src/db/index.ts';
import { type QueryEmbedder, searchMemories } from '../src/memory/index.ts';
import { type Bench, type BenchSection, ms, percentile, sample } from './lib.ts';

const SIZES = [10_000, 100_000];
const QUERIES = 60;
const WARMUP = 5;
const DIMENSIONS = 64;
const VOCABULARY_SIZE = 2_000;
const INSERT_CHUNK = 20_000;
const USER = 'bench';
const MODEL = 'bench/embed';
const DEFAULT_SERVER = 'postgres://postgres@127.0.0.1:5432/test';

/** Deterministic pseudo-random numbers (mulberry32), so every run asks the same queries. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Pronounceable pseudo-words ("kalomi"), so the English stemmer treats them as words. */
function vocabulary(): string[] {
  const syllables = [
    'ka',
    'lo',
    'mi',
    'ne',
    'ru',
    'sa',
    'to',
    'vi',
    'pe',
    'do',
    'gu',
    'ba',
    'ze',
    'fo',
    'hi',
  ];
  const words = new Set<string>();
  const random = seeded(7);
  while (words.size < VOCABULARY_SIZE) {
    const length = 2 + Math.floor(random() * 3);
    let word = '';
    for (let index = 0; index < length; index++) word += syllables[Math.floor(random() * syllables.length)];
    words.add(word);
  }
  return [...words];
}

/**
 * Word i of the vocabulary is drawn with a Zipf-like skew (index = V × u^2.5): a few words are
 * in a third of all memories, most are rare — as in real notes. Queries draw from the same
 * distribution, so some hit tens of thousands of rows.
 */
const ZIPF_POWER = 2.5;

async function load(db: Database, from: number, to: number, words: string[], withVectors: boolean) {
  for (let start = from; start < to; start += INSERT_CHUNK) {
    const end = Math.min(to, start + INSERT_CHUNK) - 1;
    // `g` inside the subqueries makes Postgres evaluate them once per row.
    await db.query(
      `INSERT INTO memory_entries (id, user_id, content, tags, category, importance, content_hash,
         embedding_model, embedded_at)
       SELECT 'm_bench_' || g, $1,
         (SELECT string_agg(($2::text[])[1 + floor(power(random(), ${ZIPF_POWER}) * $3)::int], ' ')
            FROM generate_series(1, 8 + g % 7)),
         ARRAY['tag' || (g % 25), 'tag' || (g % 7)],
         (ARRAY['preference', 'fact', 'decision', 'goal', 'relationship', 'context', 'instruction'])[1 + g % 7],
         random()::real,
         md5(g::text),
         ${withVectors ? '$6, now()' : 'NULL, NULL'}
       FROM generate_series($4::int, $5::int) g`,
      withVectors ? [USER, words, words.length, start, end, MODEL] : [USER, words, words.length, start, end],
    );
    if (withVectors) {
      await db.query(
        `INSERT INTO memory_embeddings (memory_id, embedding)
         SELECT 'm_bench_' || g,
           ARRAY(SELECT random() - 0.5 + 0 * g FROM generate_series(1, ${DIMENSIONS}))::vector
         FROM generate_series($1::int, $2::int) g`,
        [start, end],
      );
    }
  }
  // No autovacuum on PGlite; and fresh statistics for the planner on both.
  await db.exec('VACUUM ANALYZE memory_entries');
  if (withVectors) await db.exec('VACUUM ANALYZE memory_embeddings');
}

function queries(words: string[]): string[] {
  const random = seeded(42);
  const pick = () => words[Math.floor(random() ** ZIPF_POWER * words.length)]!;
  return Array.from({ length: QUERIES + WARMUP }, () =>
    Array.from({ length: 2 + Math.floor(random() * 2) }, pick).join(' '),
  );
}

function randomEmbedder(): QueryEmbedder {
  const random = seeded(99);
  return async () => ({
    vector: Array.from({ length: DIMENSIONS }, () => random() - 0.5),
    model: MODEL,
  });
}

type Row = Array<string | number>;

async function measure(
  db: Database,
  backend: string,
  size: number,
  mode: 'full_text' | 'hybrid',
  texts: string[],
): Promise<Row> {
  const embedder = mode === 'hybrid' ? randomEmbedder() : undefined;
  let hits = 0;
  const run = async (query: string) => {
    const found = await searchMemories(db, USER, { query, limit: 10 }, { embedder });
    if (found.mode !== mode) throw new Error(`expected ${mode}, got ${found.mode}: ${found.fullTextReason}`);
    return found.results.length;
  };
  for (const query of texts.slice(0, WARMUP)) await run(query);
  const durations = await sample(QUERIES, async (index) => {
    hits += await run(texts[WARMUP + index]!);
  });
  return [
    backend,
    size.toLocaleString('en-US'),
    mode === 'hybrid' ? 'hybrid (full text + vectors)' : 'full text',
    ms(percentile(durations, 50)),
    ms(percentile(durations, 95)),
    (hits / QUERIES).toFixed(1),
  ];
}

async function runOn(
  db: Database,
  backend: string,
  modes: Array<'full_text' | 'hybrid'>,
  rows: Row[],
  loads: string[],
) {
  const words = vocabulary();
  const texts = queries(words);
  await db.query('INSERT INTO users (id) VALUES ($1) ON CONFLICT (id) DO NOTHING', [USER]);
  let loaded = 0;
  for (const size of SIZES) {
    const started = performance.now();
    await load(db, loaded, size, words, modes.includes('hybrid'));
    loads.push(
      `${backend}: ${(size - loaded).toLocaleString('en-US')} rows loaded (+ VACUUM ANALYZE) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    loaded = size;
    for (const mode of modes) rows.push(await measure(db, backend, size, mode, texts));
  }
}

/** The server to measure, if one answers: BENCH_DATABASE_URL, TEST_DATABASE_URL, or the local default. */
async function serverAdmin(): Promise<{ admin: Database; url: string } | null> {
  const url = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? DEFAULT_SERVER;
  try {
    return { admin: await openPostgres(url, { max: 1 }), url };
  } catch {
    return null;
  }
}

const bench: Bench = async (): Promise<BenchSection> => {
  const rows: Row[] = [];
  const loads: string[] = [];
  const notes: string[] = [];

  const pglite = await openPglite(null);
  try {
    await migrate(pglite);
    await runOn(pglite, 'PGlite', ['full_text', 'hybrid'], rows, loads);
  } finally {
    await pglite.close();
  }

  const server = await serverAdmin();
  if (server) {
    const name = `steward_bench_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    await server.admin.exec(`CREATE DATABASE ${name}`);
    const url = new URL(server.url);
    url.pathname = `/${name}`;
    try {
      const db = await openPostgres(url.toString());
      try {
        await migrate(db);
        const modes: Array<'full_text' | 'hybrid'> = db.hasVector ? ['full_text', 'hybrid'] : ['full_text'];
        if (!db.hasVector)
          notes.push('The PostgreSQL server has no pgvector: only full-text mode runs there.');
        await runOn(db, 'PostgreSQL server', modes, rows, loads);
      } finally {
        await db.close();
      }
    } finally {
      await server.admin.exec(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await server.admin.close();
    }
  } else {
    notes.push('No PostgreSQL server answered (BENCH_DATABASE_URL / TEST_DATABASE_URL): PGlite only.');
  }

  return {
    title: 'Memory search',
    description:
      `searchMemories (what memory.search runs) for one user holding all memories, limit 10, ${QUERIES} ` +
      `queries of 2–3 words after ${WARMUP} warm-up queries; each search also updates accessed_at of what it returns. ` +
      `Synthetic memories of 8–14 words from a ${VOCABULARY_SIZE}-word vocabulary with a Zipf-like skew; ` +
      `hybrid adds random ${DIMENSIONS}-dimension vectors inserted directly (no LLM) and a random query vector.`,
    columns: ['backend', 'memories', 'mode', 'p50', 'p95', 'results/query'],
    rows,
    notes: [
      'Vectors have no fixed dimension (any embeddings model), so there is no HNSW index: the vector side is an ' +
        'exact scan of the user’s embedded memories, and it dominates hybrid time at 100k.',
      'Full text: GIN index; memories matching every word first; the any-word fallback (which ranks every row ' +
        'sharing a word) runs only when fewer than `limit` memories match every word.',
      ...loads,
      ...notes,
    ],
  };
};

export default bench;
