import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const STARTS_PROCESS = /\b(?:runCli|startServer|spawn|execFile|launchChromium)\(/g;

/**
 * Vitest runs the longest files first when it has their durations from an earlier run (its
 * cache in node_modules/.vite). Without them (a fresh checkout, CI) it would start a file that
 * spawns a dozen `steward` processes last as readily as first, and the suite would end with one
 * worker idle while the other finishes it; there the files that start the most processes (the
 * longest, nearly always) go first.
 */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const known = sorted.every((file) =>
      this.ctx.cache.getFileTestResults(
        `${file.project.name}:${path.relative(this.ctx.config.root, file.moduleId)}`,
      ),
    );
    if (known) return sorted;
    const starts = new Map(
      sorted.map((file) => [file, readFileSync(file.moduleId, 'utf8').match(STARTS_PROCESS)?.length ?? 0]),
    );
    // The projects keep the order Vitest gave them; within one, files that start as many keep theirs.
    const projects = [...new Set(sorted.map((file) => file.project.name))];
    const rank = (file: TestSpecification) => projects.indexOf(file.project.name);
    return sorted.sort((a, b) => rank(a) - rank(b) || starts.get(b)! - starts.get(a)!);
  }
}

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    sequence: { sequencer: LongestFirst },
    // Test workers import Steward's sources the way `steward` does: Node strips the types and keeps
    // the compiled modules on disk (NODE_COMPILE_CACHE, the directory bin/steward.js's compile cache
    // uses), so each new worker skips most of the work of loading them. No test uses vi.mock or
    // import.meta.vitest, which would need Vite's module runner or its loader.
    experimental: { viteModuleRunner: false, nodeLoader: false },
    env: { NODE_COMPILE_CACHE: path.join(os.tmpdir(), 'node-compile-cache') },
    projects: [
      // The unit tests beside the code share their workers' module graph: each file then skips
      // loading Steward's modules afresh (two thirds of their time). Every one passes so.
      { extends: true, test: { name: 'unit', include: ['src/**/*.test.ts'], isolate: false } },
      { extends: true, test: { name: 'integration', include: ['test/**/*.test.ts'] } },
    ],
  },
});
