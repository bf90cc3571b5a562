import type { ResolvedConfig } from '../config/index.ts';
import { type Database, openPglite, openPostgres } from './client.ts';
import { acquireDataDirLock, type DataDirLock } from './lock.ts';
import { migrate } from './migrate.ts';

export {
  type Database,
  openPglite,
  openPostgres,
  type Queryable,
  type Row,
  serverVersion,
} from './client.ts';
export { acquireDataDirLock, type DataDirLock, type LockOwner, readLockOwner } from './lock.ts';
export { listMigrations, MIGRATIONS_DIR, migrate, pendingMigrations } from './migrate.ts';

export type OpenedDatabase = { database: Database; lock: DataDirLock | null };

/**
 * Opens the configured database: the server at DATABASE_URL, or PGlite in `<data dir>/db`
 * after taking the data dir's lock. Applies pending migrations unless `migrate: false`.
 */
export async function openDatabase(
  config: Pick<ResolvedConfig, 'database_url' | 'dataDir'>,
  options: { migrate?: boolean } = {},
): Promise<OpenedDatabase> {
  let lock: DataDirLock | null = null;
  let database: Database;
  if (config.database_url) {
    database = await openPostgres(config.database_url);
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
      await migrate(database);
    } catch (error) {
      await database.close().catch(() => undefined);
      lock?.release();
      throw error;
    }
  }
  return { database, lock };
}
