import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

/*
 * Directories the test helpers make in the system's temp dir, and the data dirs of the Steward
 * processes they start (each tens of MB): removed with everything in them once the test file
 * is done (after its own hooks, which stop its servers), or else when the process exits.
 */

const made = new Set<string>();
const TMP = path.resolve(os.tmpdir());

/** A new directory in the system's temp dir, removed after the test file. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(TMP, prefix));
  made.add(dir);
  return dir;
}

/** Removes `dir` after the test file too, when it lies inside the system's temp dir (never otherwise). */
export function removeAfterFile(dir: string | undefined): void {
  if (!dir) return;
  const resolved = path.resolve(dir);
  if (resolved.startsWith(`${TMP}${path.sep}`)) made.add(resolved);
}

function removeAll(): void {
  for (const dir of made) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // A process that outlived its test may still be writing there: what is left stays.
    }
  }
  made.clear();
}

// Registered when the first test file of a worker imports this module: hooks run last in
// vitest's default (stack) order, after those of the file. Benchmarks import the helpers outside
// vitest and clean up at exit only.
if (process.env.VITEST) afterAll(removeAll);
process.once('exit', removeAll);
