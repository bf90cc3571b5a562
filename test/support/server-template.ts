import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { listMigrations, migrate, openPostgres } from '../../src/db/index.ts';

/*
 * Migrated databases on a PostgreSQL server, copied from a template: migrating a new database
 * costs 0.6 s and more of every server test database, a copy of one already migrated no more
 * than an empty CREATE DATABASE. One template per set of migrations (named after their hash),
 * built once per server by whichever test process needs it first.
 */

/**
 * Raised when the way a template is built changes, so one built the old way is never used (the
 * migration runner's own source is hashed too).
 */
const TEMPLATE_FORMAT = 1;
const PREFIX = 'steward_tpl_';
/** Templates of other migration sets kept on the server (another checkout may be using them). */
const KEEP_OTHERS = 2;
/** One key for every builder on the server: builds never overlap, nor a build and a cleanup. */
const BUILD_LOCK = 'steward-test:template-build';

/**
 * The template's name for the migrations of this checkout on this server: with the `vector`
 * extension available there, its migrations run too (and a copy needs no migrate() to learn so).
 */
async function templateName(admin: pg.Client): Promise<string> {
  const vector = await admin.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'");
  const hash = createHash('sha256');
  hash.update(`format ${TEMPLATE_FORMAT}\nvector ${vector.rows.length > 0}\n`);
  hash.update(readFileSync(fileURLToPath(new URL('../../src/db/migrate.ts', import.meta.url))));
  for (const migration of listMigrations()) hash.update(`${migration.name}\n${migration.sql}\n`);
  return `${PREFIX}${hash.digest('hex').slice(0, 16)}`;
}

const templates = new Map<string, Promise<string>>();

/**
 * Creates the database `name` on the server at `adminUrl` as a copy of the migrated template
 * (built first when the server has none for these migrations).
 */
export function createMigratedDatabase(adminUrl: string, name: string): Promise<void> {
  return withAdmin(adminUrl, async (admin) => {
    for (let attempt = 0; ; attempt++) {
      const template = await migratedTemplate(admin, adminUrl);
      try {
        await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
        break;
      } catch (error) {
        // Dropped since by a checkout with other migrations: build it again, once.
        if ((error as { code?: string }).code !== '3D000' || attempt > 0) throw error;
        templates.delete(adminUrl);
      }
    }
    // Not copied from the template: settings belong to the database, not to its contents.
    await keepCommitsOffDisk(admin, name);
  });
}

/** Creates the empty database `name` (what a template copies: no migration applied). */
export function createEmptyDatabase(adminUrl: string, name: string): Promise<void> {
  return withAdmin(adminUrl, async (admin) => {
    await admin.query(`CREATE DATABASE ${name}`);
    await keepCommitsOffDisk(admin, name);
  });
}

/** Drops the database `name`, ending the connections still open to it. */
export function dropDatabase(adminUrl: string, name: string): Promise<void> {
  return withAdmin(adminUrl, async (admin) => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });
}

/** A throwaway database: commits need not wait for the disk (~3 ms each on this machine). */
async function keepCommitsOffDisk(admin: pg.Client, name: string): Promise<void> {
  await admin.query(`ALTER DATABASE ${name} SET synchronous_commit = off`);
}

/** Runs `fn` on a connection of its own to the server's admin database. */
async function withAdmin<T>(url: string, fn: (admin: pg.Client) => Promise<T>): Promise<T> {
  // node-postgres is loaded only here, as src/db does: a run on PGlite alone never needs it.
  const { default: postgres } = await import('pg');
  const admin = new postgres.Client({ connectionString: url, application_name: 'steward-test-admin' });
  await admin.connect();
  try {
    return await fn(admin);
  } finally {
    await admin.end();
  }
}

function migratedTemplate(admin: pg.Client, adminUrl: string): Promise<string> {
  let template = templates.get(adminUrl);
  if (!template) {
    template = templateName(admin).then((name) => ensureTemplate(admin, adminUrl, name));
    templates.set(adminUrl, template);
    template.catch(() => templates.delete(adminUrl));
  }
  return template;
}

/**
 * Builds the template `name` unless the server has it. Under a lock held by every builder (test
 * workers, parallel runs), and under a temporary name until it is complete: a template that
 * exists is whole. It accepts no connections, so copying it never finds one open.
 */
async function ensureTemplate(admin: pg.Client, adminUrl: string, name: string): Promise<string> {
  await admin.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [BUILD_LOCK]);
  try {
    if (await databaseExists(admin, name)) return name;
    const partial = `steward_tplpart_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
    await admin.query(`CREATE DATABASE ${partial}`);
    try {
      const url = new URL(adminUrl);
      url.pathname = `/${partial}`;
      const database = await openPostgres(url.toString());
      try {
        await migrate(database);
      } finally {
        await database.close();
      }
      await admin.query(`ALTER DATABASE ${partial} WITH ALLOW_CONNECTIONS false`);
      await admin.query(`ALTER DATABASE ${partial} RENAME TO ${name}`);
    } catch (error) {
      await admin.query(`DROP DATABASE IF EXISTS ${partial} WITH (FORCE)`).catch(() => undefined);
      throw error;
    }
    await dropStaleTemplates(admin, name);
    return name;
  } finally {
    await admin.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [BUILD_LOCK]);
  }
}

async function databaseExists(admin: pg.Client, name: string): Promise<boolean> {
  const result = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  return result.rows.length > 0;
}

/**
 * Partial templates of builds that died, and templates of other migration sets beyond the newest
 * few (the oldest first to go). One being copied right now is dropped once the copy is done.
 */
async function dropStaleTemplates(admin: pg.Client, current: string): Promise<void> {
  const { rows } = await admin.query<{ datname: string }>(
    `SELECT datname FROM pg_database WHERE datname LIKE 'steward\\_tplpart\\_%'
     UNION ALL
     (SELECT datname FROM pg_database WHERE datname LIKE 'steward\\_tpl\\_%' AND datname <> $1
      ORDER BY oid DESC OFFSET ${KEEP_OTHERS})`,
    [current],
  );
  for (const { datname } of rows)
    await admin.query(`DROP DATABASE IF EXISTS ${datname}`).catch(() => undefined);
}
