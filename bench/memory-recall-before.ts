import path from 'node:path';
import type { Database } from '../src/db/index.ts';
import { BASELINE_COMMIT, baselineVersion } from './baseline.ts';

/*
 * "Before" for bench/memory-recall.bench.ts: memory.search's ranking as it was at the baseline
 * commit (bench/baseline.ts), run from that checkout's own source on the memories this run
 * saved — so one run measures the old ranking beside the current one on the same data. The
 * schema only grew since (columns and tables were added, none dropped), so the old queries run
 * unchanged. Null when the baseline checkout cannot be set up.
 */

export type SearchBefore = (db: Database, userId: string, query: string, limit: number) => Promise<string[]>;

type BaselineMemory = {
  searchMemories: (
    db: Database,
    userId: string,
    search: { query: string; limit: number },
    options: { touch: boolean },
  ) => Promise<{ results: Array<{ memory: { id: string } }> }>;
};

export const BEFORE_LABEL = `before: memory.search at ${BASELINE_COMMIT}`;

export async function loadSearchBefore(): Promise<SearchBefore | null> {
  const baseline = baselineVersion();
  if (!baseline) return null;
  const memory = (await import(path.join(baseline.root, 'src', 'memory', 'index.ts'))) as BaselineMemory;
  return async (db, userId, query, limit) =>
    (await memory.searchMemories(db, userId, { query, limit }, { touch: false })).results.map(
      (hit) => hit.memory.id,
    );
}
