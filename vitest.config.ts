import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      // The unit tests beside the code share their workers' module graph: each file then skips
      // loading Steward's modules afresh (two thirds of their time). Every one passes so.
      { extends: true, test: { name: 'unit', include: ['src/**/*.test.ts'], isolate: false } },
      { extends: true, test: { name: 'integration', include: ['test/**/*.test.ts'] } },
    ],
  },
});
