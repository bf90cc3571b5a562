import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BASELINE_COMMIT } from './baseline.ts';
import type { Bench } from './lib.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

type Install = {
  label: string;
  version: 'before' | 'now';
  seconds: number;
  megabytes: number;
  packages: number;
};

/** Packages installed at the top of node_modules (scoped ones counted one by one). */
function topLevelPackages(modules: string): number {
  let count = 0;
  for (const name of readdirSync(modules)) {
    if (name.startsWith('.')) continue;
    count += name.startsWith('@') ? readdirSync(path.join(modules, name)).length : 1;
  }
  return count;
}

/** `du -sm`: hard links counted once, as the disk holds them. */
function megabytes(dir: string): number {
  return Number(execFileSync('du', ['-sm', dir], { encoding: 'utf8' }).split('\t')[0]);
}

/**
 * `npm ci` of one commit in a fresh checkout (its own lockfile, npm's cache warm from earlier
 * installs on this machine, as a developer's or CI's would be): wall time and node_modules size.
 */
function install(commit: string, label: string, version: Install['version']): Install | null {
  const dir = path.join(mkdtempSync(path.join(os.tmpdir(), 'steward-install-')), 'checkout');
  try {
    execFileSync('git', ['-C', ROOT, 'worktree', 'add', '--force', '--detach', dir, commit], {
      stdio: 'ignore',
    });
    const started = performance.now();
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, stdio: 'ignore' });
    const seconds = (performance.now() - started) / 1000;
    const modules = path.join(dir, 'node_modules');
    const packages = topLevelPackages(modules);
    return { label, version, seconds, megabytes: megabytes(modules), packages };
  } catch (error) {
    process.stderr.write(`bench: npm ci of ${commit} failed: ${(error as Error).message}\n`);
    return null;
  } finally {
    if (existsSync(dir))
      execFileSync('git', ['-C', ROOT, 'worktree', 'remove', '--force', dir], { stdio: 'ignore' });
    rmSync(path.dirname(dir), { recursive: true, force: true });
  }
}

const bench: Bench = async () => {
  const rows = [
    install(BASELINE_COMMIT, `before (${BASELINE_COMMIT})`, 'before'),
    install('HEAD', 'now', 'now'),
  ].filter((row): row is Install => row !== null);
  return {
    title: 'Install: npm ci time and node_modules size, before and after (issue #22)',
    description:
      '`npm ci` of the baseline commit and of this tree, each in a fresh checkout, in one run; npm cache warm. Size is `du -sm node_modules` (hard links once), the prebuilt database template included.',
    columns: ['version', 'npm ci', 'node_modules', 'top-level packages'],
    rows: rows.map((row) => [row.label, `${row.seconds.toFixed(0)} s`, `${row.megabytes} MB`, row.packages]),
    figures: rows.map((row) => ({
      name: 'node_modules after npm ci',
      version: row.version,
      value: `${row.megabytes} MB`,
    })),
    notes: [
      'Goal (issue #22): node_modules ≤ 500 MB after `npm ci`.',
      "Removed or replaced: `googleapis` (242 MB) by `@googleapis/gmail`, `/calendar`, `/drive`; `@hubspot/api-client` (50 MB) by HubSpot REST over `fetch`; `js-tiktoken` (22 MB) by its o200k_base rank table kept in the repo (1.1 MB gzipped); ogg-opus-decoder 1.7 (18 MB with Opus 1.5 machine-learning models) by 1.6.14; the unpacked database template (42 MB) by unpacking the tarball on first open; the `node` package's C headers (67 MB, for native addons Steward does not have) removed by the postinstall step.",
      'The `node` package (Node 24 for machines with an older one: 122 MB of binary) stays, as the machine brief requires; the Docker image, already Node 24, leaves it out.',
    ],
  };
};

export default bench;
