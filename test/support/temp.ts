import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect } from 'vitest';

/*
 * Directories the test helpers make in the system's temp dir, and the data dirs of the Steward
 * processes they start (each tens of MB): removed with everything in them once the test file
 * is done (after its own hooks, which stop its servers), or else when the process exits.
 */

const made = new Set<string>();
const TMP = path.resolve(os.tmpdir());
/** The test file the directories in `made` belong to. */
let madeFor: string | undefined;

/** A new directory in the system's temp dir, removed after the test file. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(TMP, prefix));
  remember(dir);
  return dir;
}

/** Removes `dir` after the test file too, when it lies inside the system's temp dir (never otherwise). */
export function removeAfterFile(dir: string | undefined): void {
  if (!dir) return;
  const resolved = path.resolve(dir);
  if (resolved.startsWith(`${TMP}${path.sep}`)) remember(resolved);
}

/**
 * Files share their worker's modules (vitest.config.ts), so this module and the hook below are
 * loaded for the first file of a worker only: the directories of each later file are removed when
 * the next file makes its first, by then done with its hooks (its servers stopped).
 */
function remember(dir: string): void {
  const file = process.env.VITEST ? expect.getState().testPath : undefined;
  if (file !== madeFor) removeAll();
  madeFor = file;
  made.add(dir);
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
// vitest and clean up at exit only; a worker's last file's directories go at its exit, when it
// exits rather than being ended by a signal.
if (process.env.VITEST) afterAll(removeAll);
process.once('exit', removeAll);
