import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    // Files share their worker's module graph: each file then skips loading Steward's modules
    // afresh (about 3 s of every integration file; a full run on 2 cores 15 → 10 min). Nothing in
    // src/ keeps per-process state a test depends on (one composition root builds everything),
    // and every file passes so; a file that cannot must say so with its own project.
    isolate: false,
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
  },
});
