import { readdirSync, readFileSync } from 'node:fs';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The test files that start processes (`steward`, servers, scripts): their time is those
 * processes', so they keep a fresh worker each. Every other file shares its worker's module
 * graph with the files before it, skipping loading Steward's modules afresh (most of a short
 * file's time); every one of them passes so, on PGlite and on the PostgreSQL server.
 */
const STARTS_PROCESSES = /\b(?:runCli|startServer|spawn|execFile|fork)\(|node:child_process/;
const processTests = readdirSync('test')
  .filter((name) => name.endsWith('.test.ts'))
  .map((name) => `test/${name}`)
  .filter((file) => STARTS_PROCESSES.test(readFileSync(file, 'utf8')));

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'in-process',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...processTests],
          isolate: false,
        },
      },
      { extends: true, test: { name: 'processes', include: processTests } },
    ],
  },
});
