import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stewardCommand } from '../config/index.ts';
import { StewardError } from '../errors.ts';
import type { Database, Queryable } from './client.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));

export type Migration = { name: string; sql: string; needsVector: boolean };

/**
 * `NNNN_name.sql` runs everywhere; `NNNN_name.vector.sql` runs only where the `vector`
 * extension exists (and runs later if it is installed later). Sorted by file name.
 */
export function listMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((file) => /^\d{4}_[a-z0-9_]+(\.vector)?\.sql$/.test(file))
    .sort()
    .map((file) => ({
      name: file.replace(/\.sql$/, ''),
      sql: readFileSync(path.join(dir, file), 'utf8'),
      needsVector: file.endsWith('.vector.sql'),
    }));
}

/** What `migrate` may be told: a step to run before the first pending migration is applied. */
export type MigrateOptions = {
  /**
   * Runs once, before the first of `pending` is applied (never on a database with no migration
   * applied yet: there is nothing to lose). Returns where a backup of the database is, which a
   * failure message then names; throwing stops the upgrade before anything changed.
   */
  beforeApply?: (pending: string[]) => Promise<{ backup: string } | null>;
};

/**
 * Applies every pending migration, each in its own transaction: a failed one leaves the
 * database as it was before that migration. Returns the names applied.
 */
export async function migrate(
  database: Database,
  dir = MIGRATIONS_DIR,
  options: MigrateOptions = {},
): Promise<string[]> {
  return database.withAdvisoryLock('steward:migrations', async () => {
    await database.exec(
      'CREATE TABLE IF NOT EXISTS steward_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set(await appliedMigrations(database));
    const pending = listMigrations(dir).filter(
      (migration) => !done.has(migration.name) && (!migration.needsVector || database.hasVector),
    );
    const backup =
      pending.length > 0 && done.size > 0 && options.beforeApply
        ? await options.beforeApply(pending.map((migration) => migration.name))
        : null;
    const applied: string[] = [];
    for (const migration of pending) {
      try {
        // One transaction on one connection: on a server the whole text goes to the connection
        // that runs it, and a failure inside it rolls back there before the connection is reused.
        await database.transaction(async (tx) => {
          await tx.exec(migration.sql);
          await tx.query('INSERT INTO steward_migrations (name) VALUES ($1)', [migration.name]);
        });
      } catch (error) {
        const before = applied.length
          ? ` (applied before it in this run: ${applied.join(', ')})`
          : ' (nothing was applied in this run)';
        const undo = backup
          ? ` To go back to the database as it was before this upgrade: ${stewardCommand()} restore ${backup.backup} --force`
          : '';
        throw new StewardError(
          'migration_failed',
          `Migration ${migration.name} failed and was rolled back${before}: ${(error as Error).message}.${undo}`,
          { cause: error },
        );
      }
      applied.push(migration.name);
    }
    return applied;
  });
}

/** Names of the migrations applied to this database (none when it has no migrations table). */
export async function appliedMigrations(database: Queryable): Promise<string[]> {
  const table = await database.query(
    "SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'steward_migrations'",
  );
  if (table.length === 0) return [];
  return (await database.query<{ name: string }>('SELECT name FROM steward_migrations ORDER BY name')).map(
    (row) => row.name,
  );
}

/** A connection that runs multi-statement SQL inside a transaction the caller opened. */
export type MigrationSession = Queryable & { exec(text: string): Promise<void> };

/**
 * Applies `names` (those this build knows, in file order) on `session`, inside the caller's
 * transaction, and records them: a restore rebuilds an archive's schema this way before it
 * loads the archive's rows. Names already applied are skipped. Returns the names applied.
 */
export async function replayMigrations(
  session: MigrationSession,
  names: ReadonlySet<string>,
  dir = MIGRATIONS_DIR,
): Promise<string[]> {
  await session.exec(
    'CREATE TABLE IF NOT EXISTS steward_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
  );
  const done = new Set(await appliedMigrations(session));
  const applied: string[] = [];
  for (const migration of listMigrations(dir)) {
    if (!names.has(migration.name) || done.has(migration.name)) continue;
    try {
      await session.exec(migration.sql);
    } catch (error) {
      throw new StewardError(
        'migration_failed',
        `Migration ${migration.name} failed: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
    await session.query('INSERT INTO steward_migrations (name) VALUES ($1)', [migration.name]);
    applied.push(migration.name);
  }
  return applied;
}

/** Names of migrations that apply to this database but have not run. */
export async function pendingMigrations(database: Database, dir = MIGRATIONS_DIR): Promise<string[]> {
  const done = new Set(await appliedMigrations(database));
  return listMigrations(dir)
    .filter((migration) => !done.has(migration.name) && (!migration.needsVector || database.hasVector))
    .map((migration) => migration.name);
}
