import { cp, lstat, mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import {
  acquireDataDirLock,
  type Database,
  type DataDirLock,
  listMigrations,
  MIGRATIONS_DIR,
  migrate,
  openPglite,
  openPostgres,
  type Queryable,
  type Transaction,
} from '../db/index.ts';
import { type ErrorCode, errorMessage, StewardError } from '../errors.ts';
import { extractArchive } from './archive-reader.ts';
import { backupsDir, filesRoot } from './backup.ts';
import { backupStamp, writeBackupFile } from './backup-files.ts';
import { type LoadReport, loadDatabase } from './load-database.ts';
import {
  type BackupManifest,
  FILES_PREFIX,
  FORMAT_VERSION,
  MANIFEST_ENTRY,
  MANIFEST_FORMAT,
  manifestSchema,
  SKILLS_PREFIX,
} from './manifest.ts';
import { quoteIdent } from './table-catalog.ts';

export type RestoreTarget = {
  dataDir: string;
  skillsDir: string;
  /** A PostgreSQL server to restore into; unset: the embedded database in `<data dir>/db`. */
  databaseUrl?: string;
  /** Replace a target that already holds Steward data (kept aside, see RestoreReport.replaced). */
  force: boolean;
  stewardVersion: string;
  migrationsDir?: string;
  now?: () => Date;
};

export type RestoreReport = {
  manifest: BackupManifest;
  load: LoadReport;
  /** Migrations newer than the archive, applied after its rows were loaded. */
  migrated: string[];
  files: number;
  skills: number;
  /** Where the data a `--force` restore replaced was put (a folder, or a backup file on a server). */
  replaced: string | null;
};

const refuse = (code: ErrorCode, message: string) => new StewardError(code, message);

/**
 * Restores an archive written by writeBackup into an empty data dir (and its embedded database)
 * or an empty PostgreSQL database: checks every entry against its checksum first, refuses a
 * target that holds Steward data unless `force`, refuses an archive of a newer schema, loads
 * the rows in one transaction (a failure leaves the database as it was), then applies the
 * migrations the archive predates. Nothing is changed before the archive checked out whole.
 */
export async function restoreBackup(archive: string, target: RestoreTarget): Promise<RestoreReport> {
  const migrationsDir = target.migrationsDir ?? MIGRATIONS_DIR;
  const now = target.now ?? (() => new Date());
  if (!(await lstat(archive).catch(() => null))?.isFile())
    throw refuse('backup_not_found', `there is no backup file at ${archive}`);
  await mkdir(target.dataDir, { recursive: true, mode: 0o700 });
  const lock: DataDirLock | null = target.databaseUrl ? null : acquireDataDirLock(target.dataDir);
  let server: Database | null = null;
  const staging = await mkdtemp(path.join(target.dataDir, '.restore-'));
  try {
    if (target.databaseUrl)
      server = await openPostgres(target.databaseUrl, { max: 2, applicationName: 'steward-restore' });
    const holds = await existingData(target, server);
    if (holds.length > 0 && !target.force)
      throw refuse(
        'restore_target_not_empty',
        `${holds.join(', ')} already hold${holds.length === 1 ? 's' : ''} Steward data: restore into an empty data dir (STEWARD_DATA_DIR) or database, or add --force to replace it (what it replaces is kept aside)`,
      );
    if (server) await refuseOtherConnections(server);
    let manifest: BackupManifest | null = null;
    const unpacked = path.join(staging, 'archive');
    await extractArchive(archive, unpacked, {
      onFirstEntry: (name, content) => {
        manifest = checkManifest(name, content, migrationsDir, target.stewardVersion);
      },
    });
    if (!manifest) throw refuse('backup_damaged', 'the archive is empty');
    const checked: BackupManifest = manifest;
    const input = {
      migrations: checked.database.migrations,
      tables: checked.database.tables.map((table) => ({ ...table, file: path.join(unpacked, table.entry) })),
      sequences: checked.database.sequences.map((sequence) => ({
        name: sequence.name,
        lastValue: sequence.last_value,
      })),
    };
    let replaced: string | null = null;
    let load: LoadReport;
    let migrated: string[];
    const aside = path.join(backupsDir(target.dataDir), `replaced-${backupStamp(now())}`);
    if (server) {
      const database = server;
      if (holds.length > 0) {
        replaced = path.join(
          backupsDir(target.dataDir),
          `steward-backup-${backupStamp(now())}-pre-restore.tar.gz`,
        );
        await writeBackupFile(
          {
            database,
            dataDir: target.dataDir,
            skillsDir: target.skillsDir,
            stewardVersion: target.stewardVersion,
          },
          replaced,
        ).catch((error: unknown) => {
          throw refuse(
            'restore_backup_failed',
            `could not back up the database it would replace (${errorMessage(error)}): nothing was changed`,
          );
        });
      }
      load = await database.transaction(async (tx) => {
        await dropStewardObjects(tx);
        return loadDatabase(tx, input, { hasVector: database.hasVector, migrationsDir });
      });
      migrated = await migrate(database, migrationsDir);
      if (holds.length > 0) await moveAside([filesRoot(target.dataDir), target.skillsDir], aside);
    } else {
      const all = listMigrations(migrationsDir).map((migration) => migration.name);
      // A new cluster starts from the prebuilt template, which has every migration of this build:
      // an archive of another schema has it emptied of Steward's objects first and rebuilt from
      // its own migrations (the same cluster initdb and those migrations make, seconds sooner).
      const sameSchema =
        migrationsDir === MIGRATIONS_DIR &&
        all.length === checked.database.migrations.length &&
        all.every((name) => checked.database.migrations.includes(name));
      const database = await openPglite(path.join(staging, 'data'));
      try {
        load = await database.transaction(async (tx) => {
          if (!sameSchema) await dropStewardObjects(tx);
          return loadDatabase(tx, input, { hasVector: true, migrationsDir });
        });
        migrated = await migrate(database, migrationsDir);
      } finally {
        await database.close();
      }
      if (holds.length > 0) {
        await moveAside(
          [path.join(target.dataDir, 'db'), filesRoot(target.dataDir), target.skillsDir],
          aside,
        );
        replaced = aside;
      }
      await rename(path.join(staging, 'data', 'db'), path.join(target.dataDir, 'db'));
    }
    const files = await moveInto(path.join(unpacked, FILES_PREFIX), filesRoot(target.dataDir));
    const skills = await moveInto(path.join(unpacked, SKILLS_PREFIX), target.skillsDir);
    return { manifest: checked, load, migrated, files, skills, replaced };
  } finally {
    await rm(staging, { recursive: true, force: true });
    await server?.close();
    lock?.release();
  }
}

function checkManifest(
  name: string,
  content: Buffer,
  migrationsDir: string,
  stewardVersion: string,
): BackupManifest {
  if (name !== MANIFEST_ENTRY)
    throw refuse(
      'backup_damaged',
      `the archive does not start with ${MANIFEST_ENTRY}: it is not a Steward backup`,
    );
  let parsed: unknown;
  try {
    parsed = JSON.parse(content.toString('utf8'));
  } catch {
    throw refuse('backup_damaged', `${MANIFEST_ENTRY} is not valid JSON: the archive is damaged`);
  }
  const format = (parsed as { format?: unknown; format_version?: unknown }) ?? {};
  if (format.format !== MANIFEST_FORMAT)
    throw refuse('backup_damaged', 'this archive is not a Steward backup');
  if (typeof format.format_version === 'number' && format.format_version > FORMAT_VERSION)
    throw refuse(
      'backup_newer_schema',
      `this backup was written in a newer archive format (${format.format_version}) by a newer Steward: upgrade Steward, then restore`,
    );
  const result = manifestSchema.safeParse(parsed);
  if (!result.success)
    throw refuse(
      'backup_damaged',
      `${MANIFEST_ENTRY} is incomplete (${result.error.issues[0]?.path.join('.')})`,
    );
  const known = new Set(listMigrations(migrationsDir).map((migration) => migration.name));
  const unknown = result.data.database.migrations.filter((migration) => !known.has(migration));
  if (unknown.length > 0)
    throw refuse(
      'backup_newer_schema',
      `this backup is from a newer Steward (${result.data.steward_version}; this is ${stewardVersion}): its database has migrations this version does not know (${unknown.join(', ')}). Upgrade Steward to ${result.data.steward_version} or later, then restore`,
    );
  return result.data;
}

/** What in the target already holds Steward data, in words (empty: nothing). */
async function existingData(target: RestoreTarget, server: Database | null): Promise<string[]> {
  const holds: string[] = [];
  if (server) {
    const tables = await server.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')`,
    );
    if ((tables[0]?.n ?? 0) > 0) holds.push('the database at DATABASE_URL');
  } else if (await hasEntries(path.join(target.dataDir, 'db')))
    holds.push(`the database in ${target.dataDir}/db`);
  if (await hasEntries(filesRoot(target.dataDir))) holds.push(`the files in ${filesRoot(target.dataDir)}`);
  if (await hasEntries(target.skillsDir)) holds.push(`the skills dir ${target.skillsDir}`);
  return holds;
}

async function hasEntries(dir: string): Promise<boolean> {
  return ((await readdir(dir).catch(() => [])) as string[]).length > 0;
}

/** A restore under a running server's feet would be overwritten by it: refuse while one is connected. */
async function refuseOtherConnections(database: Queryable): Promise<void> {
  const rows = await database.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND pid <> pg_backend_pid()
       AND application_name LIKE 'steward%' AND application_name <> 'steward-restore'`,
  );
  if ((rows[0]?.n ?? 0) > 0)
    throw refuse(
      'restore_target_in_use',
      `${rows[0]!.n} Steward connection(s) are open to this database: stop every Steward server using it, then restore`,
    );
}

/** Drops what Steward keeps in the database (its tables and functions, and the job queue's schema); extensions stay. */
export async function dropStewardObjects(tx: Transaction): Promise<void> {
  await tx.exec('DROP SCHEMA IF EXISTS pgboss CASCADE');
  const tables = await tx.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm')
       AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = c.oid AND d.deptype = 'e')`,
  );
  for (const table of tables) await tx.exec(`DROP TABLE IF EXISTS ${quoteIdent(table.name)} CASCADE`);
  const functions = await tx.query<{ signature: string }>(
    `SELECT p.oid::regprocedure::text AS signature FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
     WHERE n.nspname = current_schema()
       AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')`,
  );
  for (const fn of functions) await tx.exec(`DROP FUNCTION IF EXISTS ${fn.signature} CASCADE`);
}

/** Moves each existing, non-empty path into `aside` (a folder kept under the backups dir). */
async function moveAside(paths: string[], aside: string): Promise<void> {
  for (const item of paths) {
    if (!(await hasEntries(item))) {
      await rm(item, { recursive: true, force: true });
      continue;
    }
    await mkdir(aside, { recursive: true, mode: 0o700 });
    await move(item, path.join(aside, path.basename(item)));
  }
}

/** Moves the extracted folder `from` to `to` (which is absent or empty). Returns the files it holds. */
async function moveInto(from: string, to: string): Promise<number> {
  const count = await countFiles(from);
  if (count === 0) {
    await mkdir(to, { recursive: true, mode: 0o700 });
    return 0;
  }
  await rm(to, { recursive: true, force: true });
  await mkdir(path.dirname(to), { recursive: true, mode: 0o700 });
  await move(from, to);
  return count;
}

async function move(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    // Another file system (a skills dir elsewhere): copy, then remove the original.
    await cp(from, to, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
    await rm(from, { recursive: true, force: true });
  }
}

async function countFiles(dir: string): Promise<number> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).length;
}
