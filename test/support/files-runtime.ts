import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { runOnRuntime } from '../../src/cli/run.ts';
import { loadConfig } from '../../src/config/index.ts';
import type { Database } from '../../src/db/index.ts';
import { type DriveConnector, FILES_INDEX_JOB } from '../../src/files/index.ts';
import { silentLogger } from '../../src/logging/logger.ts';
import { createRuntime, type Runtime } from '../../src/runtime.ts';
import { tempDir } from './temp.ts';

export type FilesRuntime = {
  runtime: Runtime;
  dataDir: string;
  /** Runs a command the way `steward run` does; returns status and content. */
  run(
    command: string,
    user?: string,
  ): Promise<{ status: 'ok' | 'error'; content: string; metadata: Record<string, unknown> }>;
  /** Runs the queued index jobs now (what a server's workers do within a second). */
  index(): Promise<number>;
  close(): Promise<void>;
};

/**
 * `ok` and `error` run a command on `steward()`, assert its status (showing the command and what
 * it answered when it differs) and return its content.
 */
export function expectingStatus(steward: () => FilesRuntime) {
  const expecting = (status: 'ok' | 'error') => async (command: string, user?: string) => {
    const result = await steward().run(command, user);
    expect(result.status, `${command}\n${result.content}`).toBe(status);
    return result.content;
  };
  return { ok: expecting('ok'), error: expecting('error') };
}

/** A runtime without any LLM on an existing test database, with its own data dir. */
export async function startFilesRuntime(
  database: Database,
  options: { yaml?: string; drive?: DriveConnector } = {},
): Promise<FilesRuntime> {
  const home = tempDir('steward-files-');
  writeFileSync(path.join(home, 'steward.yaml'), options.yaml ?? '');
  const dataDir = path.join(home, 'data');
  const config = loadConfig({
    env: { STEWARD_CONFIG: path.join(home, 'steward.yaml'), STEWARD_DATA_DIR: dataDir },
    cwd: home,
  });
  const runtime = await createRuntime(config, {
    database,
    logger: silentLogger(),
    ...(options.drive ? { drive: options.drive } : {}),
  });
  return {
    runtime,
    dataDir,
    // As `steward run` executes a command on its runtime.
    run: (command, userId = 'local') => runOnRuntime(runtime, command, userId),
    index: () => runtime.jobs.drain([FILES_INDEX_JOB]),
    close: () => runtime.close(),
  };
}
