import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * "Before" for the before/after benches: the commit issues #22 and #23 measured (the landed
 * main of 2026-11-27), checked out beside this tree with its own dependencies, so both versions are
 * measured in one run on one machine. Null when it cannot be set up (no git history, no
 * registry); the benches then report the current tree only and say so.
 */

export const BASELINE_COMMIT = 'a42163f';
const ROOT = fileURLToPath(new URL('../', import.meta.url));
// Outside node_modules: Node strips TypeScript types only outside it.
const DIR = path.join(os.tmpdir(), `steward-baseline-${BASELINE_COMMIT}`);

export type Version = { label: string; root: string; node: string };

export function currentVersion(): Version {
  return { label: 'now', root: ROOT, node: process.execPath };
}

let prepared: Version | null | undefined;

export function baselineVersion(): Version | null {
  if (prepared !== undefined) return prepared;
  prepared = null;
  try {
    if (!existsSync(path.join(DIR, 'package.json'))) {
      mkdirSync(path.dirname(DIR), { recursive: true });
      execFileSync('git', ['-C', ROOT, 'worktree', 'add', '--force', '--detach', DIR, BASELINE_COMMIT], {
        stdio: 'ignore',
      });
    }
    const node = path.join(DIR, 'node_modules', 'node', 'bin', 'node');
    if (!existsSync(node)) {
      execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
        cwd: DIR,
        stdio: 'ignore',
      });
    }
    prepared = { label: `before (${BASELINE_COMMIT})`, root: DIR, node };
  } catch (error) {
    process.stderr.write(`bench: no baseline checkout of ${BASELINE_COMMIT}: ${(error as Error).message}\n`);
  }
  return prepared;
}
