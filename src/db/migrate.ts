import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { StewardError } from '../errors.ts';
import type { Database } from './client.ts';

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

/** Applies every pending migration, each in its own transaction. Returns the names applied. */
export async function migrate(database: Database, dir = MIGRATIONS_DIR): Promise<string[]> {
  return database.withAdvisoryLock('steward:migrations', async () => {
    await database.exec(
      'CREATE TABLE IF NOT EXISTS steward_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set(
      (await database.query<{ name: string }>('SELECT name FROM steward_migrations')).map((row) => row.name),
    );
    const applied: string[] = [];
    for (const migration of listMigrations(dir)) {
      if (done.has(migration.name) || (migration.needsVector && !database.hasVector)) continue;
      try {
        await database.exec(
          `BEGIN;\n${migration.sql}\n;INSERT INTO steward_migrations (name) VALUES ('${migration.name}');\nCOMMIT;`,
        );
      } catch (error) {
        await database.exec('ROLLBACK').catch(() => undefined);
        throw new StewardError(
          'migration_failed',
          `Migration ${migration.name} failed: ${(error as Error).message}`,
          {
            cause: error,
          },
        );
      }
      applied.push(migration.name);
    }
    return applied;
  });
}

/** Names of migrations that apply to this database but have not run. */
export async function pendingMigrations(database: Database, dir = MIGRATIONS_DIR): Promise<string[]> {
  const table = await database.query(
    "SELECT 1 FROM information_schema.tables WHERE table_name = 'steward_migrations'",
  );
  const done = new Set(
    table.length === 0
      ? []
      : (await database.query<{ name: string }>('SELECT name FROM steward_migrations')).map(
          (row) => row.name,
        ),
  );
  return listMigrations(dir)
    .filter((migration) => !done.has(migration.name) && (!migration.needsVector || database.hasVector))
    .map((migration) => migration.name);
}
