/** A benchmark file (`bench/*.bench.ts`) default-exports a function returning one section of RESULTS.md. */
export type BenchSection = {
  title: string;
  /** One line on what was measured and how. */
  description: string;
  columns: string[];
  rows: Array<Array<string | number>>;
  notes?: string[];
  /** Figures of issue #22 §6 this section measured, for the before/after summary (run.ts). */
  figures?: Figure[];
};

/** One measured value of a §6 figure, for one version ('before' or 'now'). */
export type Figure = { name: SpeedFigure; version: 'before' | 'now'; value: string };

/**
 * Issue #22 §6 "Speed and footprint": the figures `npm run bench` summarizes at the top of
 * RESULTS.md, before and after, in this order, with their goals.
 */
export const SPEED_FIGURES = {
  'engine turn p50, PGlite': '≤ 5 ms',
  'engine turn p99, PGlite': '≤ 15 ms',
  'turn over HTTP p50, PGlite': '—',
  'restart to ready': '—',
  'RSS after 70 HTTP turns, PGlite': '≤ 200 MB',
  'RSS at the end of the soak, PGlite': '≤ 250 MB',
  'node_modules after npm ci': '≤ 500 MB',
  'test suite': '≤ 6 min on 2 cores',
} as const;
export type SpeedFigure = keyof typeof SPEED_FIGURES;

export type Bench = () => Promise<BenchSection | BenchSection[]>;

/** p-th percentile (0–100) of `samples`, nearest-rank. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** Runs `fn` `iterations` times and returns each duration in milliseconds. */
export async function sample(
  iterations: number,
  fn: (index: number) => Promise<unknown> | unknown,
): Promise<number[]> {
  const durations: number[] = [];
  for (let index = 0; index < iterations; index++) {
    const start = performance.now();
    await fn(index);
    durations.push(performance.now() - start);
  }
  return durations;
}

export const ms = (value: number) => `${value < 10 ? value.toFixed(2) : value.toFixed(1)} ms`;

/**
 * The PostgreSQL server benchmarks also run on: BENCH_DATABASE_URL or TEST_DATABASE_URL, else
 * the local server at 127.0.0.1:5432 when it answers. Sets TEST_DATABASE_URL so the test
 * helpers (backends(), createTestDatabase) see it. Null when there is none.
 */
export async function useBenchDatabase(): Promise<string | null> {
  const candidate =
    process.env.BENCH_DATABASE_URL ||
    process.env.TEST_DATABASE_URL ||
    'postgres://postgres@127.0.0.1:5432/test';
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: candidate, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.end();
    process.env.TEST_DATABASE_URL = candidate;
    return candidate;
  } catch {
    await client.end().catch(() => undefined);
    return null;
  }
}
