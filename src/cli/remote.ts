import type { ResolvedConfig } from '../config/index.ts';
import { type Database, openDatabase, readLockOwner } from '../db/index.ts';
import { CliExit, EXIT_ERROR } from './common.ts';

/**
 * When a server owns the embedded data dir, CLI commands go through its HTTP API instead of
 * opening the database (PGlite must have exactly one owner). Null when nobody owns it.
 */
export function remoteServer(
  config: ResolvedConfig,
): { url: string; headers: Record<string, string> } | null {
  if (config.database_url) return null;
  const owner = readLockOwner(config.dataDir);
  if (!owner || owner.pid === process.pid || !owner.port) return null;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (config.api_token) headers.authorization = `Bearer ${config.api_token}`;
  return { url: `http://127.0.0.1:${owner.port}`, headers };
}

type Remote = NonNullable<ReturnType<typeof remoteServer>>;

/**
 * One JSON request to the running server for the `steward <command>` that asks; a refusal
 * becomes the command's error with the server's own message.
 */
export async function callServer<T = unknown>(
  remote: Remote,
  command: string,
  method: string,
  route: string,
  body?: unknown,
): Promise<T> {
  const response = await fetch(`${remote.url}${route}`, {
    method,
    headers: remote.headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const answer = (await response.json().catch(() => ({}))) as T & { message?: string };
  if (!response.ok)
    throw new CliExit(
      EXIT_ERROR,
      `${command}: ${answer.message ?? `the server answered ${response.status}`}`,
    );
  return answer;
}

/** Runs `work` on the database opened directly (no server owns it), closing it and its lock after. */
export async function withDatabase<T>(
  config: ResolvedConfig,
  work: (database: Database) => Promise<T>,
): Promise<T> {
  const { database, lock } = await openDatabase(config);
  try {
    return await work(database);
  } finally {
    await database.close();
    lock?.release();
  }
}
