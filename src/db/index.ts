import type { ResolvedConfig } from '../config/index.ts';
import { type Database, openPglite, openPostgres } from './client.ts';
import { acquireDataDirLock, type DataDirLock } from './lock.ts';
import { type MigrateOptions, migrate } from './migrate.ts';

export {
  type Database,
  openPglite,
  openPostgres,
  type Queryable,
  type Row,
  serverVersion,
  type Transaction,
} from './client.ts';
export { gunzipWhole } from './gunzip-whole.ts';
export { KeyedLock, KeyedQueue } from './keyed-lock.ts';
export { acquireDataDirLock, type DataDirLock, type LockOwner, readLockOwner } from './lock.ts';
export {
  appliedMigrations,
  listMigrations,
  MIGRATIONS_DIR,
  type MigrateOptions,
  type Migration,
  type MigrationSession,
  migrate,
  pendingMigrations,
  replayMigrations,
} from './migrate.ts';

export type OpenedDatabase = { database: Database; lock: DataDirLock | null };

/**
 * How `total` connections per instance are shared: 4 for the job queue, 1 that marks the
 * instance alive, a third of the rest for queries, the others for held turn locks (a turn
 * pins one for as long as it runs, so they bound the turns an instance runs at once).
 */
export function connectionBudget(total: number): { max: number; lockConnections: number } {
  const rest = total - 5;
  const max = Math.max(2, Math.floor(rest / 3));
  return { max, lockConnections: rest - max };
}

/**
 * Opens the configured database: the server at DATABASE_URL, or PGlite in `<data dir>/db`
 * after taking the data dir's lock. Applies pending migrations unless `migrate: false`
 * (`beforeMigrate` runs first when some are pending: the backup an upgrade can be undone with).
 */
export async function openDatabase(
  config: Pick<ResolvedConfig, 'database_url' | 'dataDir'> & { database_max_connections?: number },
  options: { migrate?: boolean; beforeMigrate?: (database: Database) => MigrateOptions['beforeApply'] } = {},
): Promise<OpenedDatabase> {
  let lock: DataDirLock | null = null;
  let database: Database;
  if (config.database_url) {
    database = await openPostgres(
      config.database_url,
      connectionBudget(config.database_max_connections ?? 30),
    );
  } else {
    lock = acquireDataDirLock(config.dataDir);
    try {
      database = await openPglite(config.dataDir);
    } catch (error) {
      lock.release();
      throw error;
    }
  }
  if (options.migrate !== false) {
    try {
      const beforeApply = options.beforeMigrate?.(database);
      await migrate(database, undefined, beforeApply ? { beforeApply } : {});
    } catch (error) {
      await database.close().catch(() => undefined);
      lock?.release();
      throw error;
    }
  }
  return { database, lock };
}
