import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ResolvedConfig } from './load.ts';

/**
 * Settings the running server reads once, at start: a change to them in steward.yaml is taken
 * in, but nothing uses it until the next start (servers listen, adapters and MCP connections
 * are built, the database is opened). Dotted paths; a block's name covers everything in it.
 */
export const RESTART_SETTINGS: readonly string[] = [
  'host',
  'port',
  'database_url',
  'database_max_connections',
  'data_dir',
  'skills_dir',
  'skills_poll_seconds',
  'shutdown_grace_seconds',
  'mcp_servers',
  // The adapters are built at start; channels.modes and channels.allow are read per message.
  'channels.public_url',
  'channels.telegram',
  'channels.slack',
  'channels.whatsapp',
  'channels.googlechat',
  'channels.discord',
  'channels.matrix',
  'channels.signal',
  'channels.email',
  'channels.email_poll_seconds',
  'channels.email_require_authentication',
  'sentinel.enabled',
  'workflows.enabled',
  'limits.skill_timeout_ms',
  'logs',
  'tracing',
  'backup.keep',
];

/** The file a server writes while settings it read at start differ from steward.yaml. */
export const PENDING_RESTART_FILE = 'config-restart-needed.json';

function valueAt(config: ResolvedConfig, dotted: string): unknown {
  let value: unknown = config;
  for (const key of dotted.split('.')) value = (value as Record<string, unknown> | undefined)?.[key];
  return value;
}

/** The settings of `RESTART_SETTINGS` whose value in `next` differs from the one the server started with. */
export function settingsNeedingRestart(next: ResolvedConfig, started: ResolvedConfig): string[] {
  return RESTART_SETTINGS.filter(
    (setting) => JSON.stringify(valueAt(next, setting)) !== JSON.stringify(valueAt(started, setting)),
  );
}

type PendingRestart = { pid: number; settings: string[]; since: string };

/** Records (or, with no settings, clears) what the server in this process waits on a restart for. */
export function recordPendingRestart(dataDir: string, settings: string[], now = new Date()): void {
  const file = path.join(dataDir, PENDING_RESTART_FILE);
  try {
    if (settings.length === 0) rmSync(file, { force: true });
    else {
      const pending: PendingRestart = { pid: process.pid, settings, since: now.toISOString() };
      writeFileSync(file, `${JSON.stringify(pending)}\n`);
    }
  } catch {
    // A data dir that cannot be written to: the log line still says it; doctor does not.
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * What the server running on `dataDir` waits on a restart for, or null (none, or the server
 * that recorded it is gone). Read by `steward doctor`.
 */
export function pendingRestart(dataDir: string): PendingRestart | null {
  let pending: PendingRestart;
  try {
    pending = JSON.parse(readFileSync(path.join(dataDir, PENDING_RESTART_FILE), 'utf8')) as PendingRestart;
  } catch {
    return null;
  }
  if (!Array.isArray(pending.settings) || pending.settings.length === 0 || !isRunning(pending.pid))
    return null;
  return pending;
}

/** doctor's line for a pending restart (a note: everything else of the change took effect), or null. */
export function pendingRestartCheck(
  dataDir: string,
): { name: string; ok: true; note: true; detail: string; fix: string } | null {
  const pending = pendingRestart(dataDir);
  if (!pending) return null;
  return {
    name: 'config',
    ok: true,
    note: true,
    detail: `steward.yaml changed ${pending.settings.join(', ')} at ${pending.since}; the running server (pid ${pending.pid}) still uses the values it started with`,
    fix: 'restart the server (stop it, then npx steward start) for that change to take effect',
  };
}
