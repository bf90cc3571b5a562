import type { ResolvedConfig } from '../config/index.ts';
import { readLockOwner } from '../db/index.ts';

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
