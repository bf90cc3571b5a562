import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { baselineVersion, currentVersion, type Version } from './baseline.ts';
import type { Bench, Figure } from './lib.ts';

/*
 * Issue #22 §6: the test suite's wall time on this machine, before and after, each version's
 * whole suite (`vitest run` with its own vitest.config.ts) run here in this run. BENCH_SUITE=0
 * leaves it out (it takes the longest of all the benches).
 */

type Run = { version: Version; seconds: number; files: number; passed: number; failed: number };

function runSuite(version: Version): Run | null {
  const report = path.join(mkdtempSync(path.join(os.tmpdir(), 'steward-suite-')), 'report.json');
  const started = performance.now();
  const result = spawnSync(
    version.node,
    [
      path.join(version.root, 'node_modules', 'vitest', 'vitest.mjs'),
      'run',
      '--reporter=json',
      `--outputFile=${report}`,
    ],
    {
      cwd: version.root,
      env: { ...process.env, PATH: `${path.dirname(version.node)}:${process.env.PATH ?? ''}` },
      stdio: 'ignore',
      timeout: 3_600_000,
    },
  );
  const seconds = (performance.now() - started) / 1000;
  try {
    const json = JSON.parse(readFileSync(report, 'utf8')) as {
      numTotalTestSuites: number;
      numPassedTests: number;
      numFailedTests: number;
      testResults: unknown[];
    };
    return {
      version,
      seconds,
      files: json.testResults.length,
      passed: json.numPassedTests,
      failed: json.numFailedTests,
    };
  } catch (error) {
    process.stderr.write(
      `bench: the suite of ${version.label} left no report (exit ${result.status}): ${(error as Error).message}\n`,
    );
    return null;
  }
}

const minutes = (seconds: number) => `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;

const bench: Bench = async () => {
  const versions = [baselineVersion(), currentVersion()].filter(
    (version): version is Version => version !== null,
  );
  const skip = process.env.BENCH_SUITE === '0';
  const runs = skip ? [] : versions.map(runSuite).filter((run): run is Run => run !== null);
  const figures: Figure[] = runs.map((run) => ({
    name: 'test suite',
    version: run.version.label === 'now' ? 'now' : 'before',
    value: minutes(run.seconds),
  }));
  return {
    title: 'Test suite wall time, before and after (issue #22)',
    description: `Each version's whole suite (\`vitest run\`, its own vitest.config.ts) run by this bench on this machine, one after the other${process.env.TEST_DATABASE_URL ? ', the PostgreSQL variants included (TEST_DATABASE_URL set)' : ', on the embedded database only (no TEST_DATABASE_URL)'}.`,
    columns: ['version', 'wall time', 'test files', 'tests passed', 'tests failed'],
    rows: runs.map((run) => [run.version.label, minutes(run.seconds), run.files, run.passed, run.failed]),
    notes: [
      skip
        ? 'Left out of this run (BENCH_SUITE=0).'
        : `Machine: ${os.cpus().length} cores. Goal (issue #22 §6): ≤ 6 minutes on 2 cores.`,
    ],
    figures,
  };
};

export default bench;
