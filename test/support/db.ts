import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe } from 'vitest';
import { type Database, migrate, openPglite, openPostgres } from '../../src/db/index.ts';
import { createEmptyDatabase, createMigratedDatabase, dropDatabase } from './server-template.ts';

export type Backend = 'pglite' | 'postgres';

/** The backends database tests run on: PGlite always, the server when TEST_DATABASE_URL is set. */
export function backends(): Backend[] {
  return process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];
}

export type TestDatabase = { database: Database; url: string | null; drop(): Promise<void> };

/**
 * A fresh, migrated database: in-memory PGlite, or a new database on the server named
 * `steward_test_<random>` (dropped by `drop()`), copied from a migrated template. With
 * `migrate: false`, an empty one (on the server: as CREATE DATABASE makes it).
 */
export async function createTestDatabase(
  backend: Backend,
  options: {
    migrate?: boolean;
    /** The server to create it on (default TEST_DATABASE_URL). */
    adminUrl?: string;
  } = {},
): Promise<TestDatabase> {
  if (backend === 'pglite') {
    const database = await openPglite(null);
    if (options.migrate !== false) await migrate(database);
    return { database, url: null, drop: () => database.close() };
  }
  const adminUrl = options.adminUrl ?? process.env.TEST_DATABASE_URL;
  if (!adminUrl) throw new Error('TEST_DATABASE_URL is not set');
  const name = `steward_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  if (options.migrate === false) await createEmptyDatabase(adminUrl, name);
  else await createMigratedDatabase(adminUrl, name);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const database = await openPostgres(url.toString());
  return {
    database,
    url: url.toString(),
    drop: async () => {
      await database.close();
      await dropDatabase(adminUrl, name);
    },
  };
}

/**
 * Declares `body` once per backend, each with its own fresh database for the whole block.
 * `get()` returns the database inside tests; `getTest()` also its URL (on the server).
 */
export function describeEachBackend(
  name: string,
  body: (get: () => Database, backend: Backend, getTest: () => TestDatabase) => void,
): void {
  for (const backend of backends()) {
    describe(`${name} [${backend}]`, () => {
      let test: TestDatabase | undefined;
      beforeAll(async () => {
        test = await createTestDatabase(backend);
      });
      afterAll(async () => {
        await test?.drop();
      });
      const getTest = () => {
        if (!test) throw new Error('database not ready');
        return test;
      };
      body(() => getTest().database, backend, getTest);
    });
  }
}
