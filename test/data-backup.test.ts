import { randomUUID } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  backupBeforeMigrations,
  dropStewardObjects,
  dumpDatabase,
  extractArchive,
  listBackups,
  type RestoreReport,
  restoreBackup,
  writeBackupFile,
  writeKeptBackup,
} from '../src/backup/index.ts';
import { stewardCommand } from '../src/config/index.ts';
import {
  type Database,
  listMigrations,
  MIGRATIONS_DIR,
  migrate,
  openPglite,
  openPostgres,
} from '../src/db/index.ts';
import { type Backend, createTestDatabase, describeEachBackend } from './support/db.ts';
import { type FilesRuntime, startFilesRuntime } from './support/files-runtime.ts';
import { treeSums } from './support/tree-sums.ts';

const VERSION = '0.1.0';
/** What a backup of `files`' runtime on `database` reads, by this version. */
const sourcesOf = (files: FilesRuntime, database: Database) => ({
  database,
  dataDir: files.dataDir,
  skillsDir: files.runtime.config.get().skillsDir,
  stewardVersion: VERSION,
});
const tmp = (prefix: string) => mkdtempSync(path.join(os.tmpdir(), `steward-${prefix}-`));

/** An empty database on the test server (no tables), dropped with `drop()`. */
async function emptyServerDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const adminUrl = process.env.TEST_DATABASE_URL!;
  const name = `steward_restore_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const admin = await openPostgres(adminUrl, { max: 1 });
  await admin.exec(`CREATE DATABASE ${name}`);
  await admin.close();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const cleanup = await openPostgres(adminUrl, { max: 1 });
      await cleanup.exec(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await cleanup.close();
    },
  };
}

/** Table name → [rows, sha256] of a fresh dump. */
async function tableSums(database: Database): Promise<Record<string, [number, string]>> {
  const dir = tmp('dump');
  try {
    const dump = await dumpDatabase(database, dir);
    return Object.fromEntries(dump.tables.map((table) => [table.name, [table.rows, table.sha256]]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function seed(files: FilesRuntime): Promise<void> {
  for (const user of ['local', 'alice']) {
    for (const command of [
      `tasks.create --title "Pay the ${user} invoice" --priority high`,
      `memory.save --content "${user} prefers oat milk" --category preference --tags coffee`,
      `files.write --path notes/plan.md --content "first plan of ${user}"`,
      `files.write --path notes/plan.md --content "second plan of ${user}"`,
      `files.write --path "deep/er/é.txt" --content "accents ${user}"`,
    ]) {
      const result = await files.run(command, user);
      expect(result.status, `${command}: ${result.content}`).toBe('ok');
    }
    await files.runtime.engine.handle({ userId: user, text: `hello from ${user}`, channel: 'cli' });
  }
}

type Target = Awaited<ReturnType<typeof freshTarget>>;

/** Where a restore goes: a fresh data dir, and on the server an empty database too. */
async function freshTarget(backend: Backend) {
  const dataDir = path.join(tmp('target'), 'data');
  const server = backend === 'postgres' ? await emptyServerDatabase() : null;
  const open = async (): Promise<Database> =>
    server ? openPostgres(server.url, { max: 2 }) : openPglite(dataDir);
  return {
    dataDir,
    skillsDir: path.join(dataDir, 'skills'),
    ...(server ? { databaseUrl: server.url } : {}),
    open,
    drop: async () => {
      await server?.drop();
      rmSync(path.dirname(dataDir), { recursive: true, force: true });
    },
  };
}

// One database per backend for both blocks: the upgrade case leaves it as it was.
describeEachBackend('backups', (get, backend) => {
  describe('backup and restore', () => {
    let files: FilesRuntime;
    let archive: string;
    /** The archive restored into a fresh target, once: the first test checks it, a later one restores over it. */
    let restored: Promise<{ target: Target; report: RestoreReport }> | undefined;
    const restoreOnce = () => {
      restored ??= (async () => {
        const target = await freshTarget(backend);
        try {
          return {
            target,
            report: await restoreBackup(archive, { ...target, force: false, stewardVersion: VERSION }),
          };
        } catch (error) {
          await target.drop();
          throw error;
        }
      })();
      return restored;
    };
    beforeAll(async () => {
      files = await startFilesRuntime(get());
      await seed(files);
      archive = path.join(tmp('archive'), 'backup.tar.gz');
      await writeBackupFile(sourcesOf(files, get()), archive);
    }, 120_000);
    afterAll(async () => {
      await files?.close();
      await (await restored?.catch(() => undefined))?.target.drop();
    });

    it('restores every table and file into a fresh target: same rows, same bytes', async () => {
      const { target, report } = await restoreOnce();
      expect(report.migrated).toEqual([]);
      expect(report.files).toBeGreaterThan(0);
      const database = await target.open();
      try {
        const after = await tableSums(database);
        const before = Object.fromEntries(
          report.manifest.database.tables.map((table) => [table.name, [table.rows, table.sha256]]),
        );
        expect(after).toEqual(before);
        expect(after.tasks?.[0]).toBe(2);
        expect(after.turns?.[0]).toBe(2);
      } finally {
        await database.close();
      }
      const sums = treeSums(path.join(target.dataDir, 'files'));
      expect(sums).toEqual(treeSums(path.join(files.dataDir, 'files')));
      expect(Object.keys(sums)).toContain(path.join('alice', '.archive', '+notes', '+plan.md', 'v1.md'));
    }, 120_000);

    it('refuses a damaged archive and changes nothing', async () => {
      const damaged = path.join(path.dirname(archive), 'damaged.tar.gz');
      const bytes = readFileSync(archive);
      bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
      writeFileSync(damaged, bytes);
      const cut = path.join(path.dirname(archive), 'cut.tar.gz');
      writeFileSync(cut, readFileSync(archive).subarray(0, Math.floor(bytes.length * 0.7)));
      // One target for both: still empty after the first refusal, so the second is refused for its archive too.
      const target = await freshTarget(backend);
      try {
        for (const file of [damaged, cut]) {
          const refusal = await restoreBackup(file, {
            ...target,
            force: false,
            stewardVersion: VERSION,
          }).then(
            () => null,
            (error: unknown) => error,
          );
          if (refusal === null) {
            // The archive differs every run (ids, times): keep what was accepted, to reproduce it.
            const kept = mkdtempSync(path.join(os.tmpdir(), 'steward-accepted-damage-'));
            cpSync(file, path.join(kept, path.basename(file)));
            cpSync(archive, path.join(kept, 'original.tar.gz'));
            expect.fail(
              `the restore accepted ${path.basename(file)}; it and the original are kept in ${kept}`,
            );
          }
          expect(refusal).toMatchObject({ code: 'backup_damaged' });
          expect(existsSync(path.join(target.dataDir, 'db'))).toBe(false);
          expect(readdirSync(target.dataDir).filter((name) => name !== 'steward.lock')).toEqual([]);
          if (target.databaseUrl) {
            const database = await target.open();
            try {
              expect(
                await database.query(
                  "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'",
                ),
              ).toEqual([]);
            } finally {
              await database.close();
            }
          }
        }
      } finally {
        await target.drop();
      }
    }, 120_000);

    it('refuses a target that holds Steward data unless forced, and keeps what it replaced', async () => {
      const { target } = await restoreOnce();
      await expect(
        restoreBackup(archive, { ...target, force: false, stewardVersion: VERSION }),
      ).rejects.toMatchObject({
        code: 'restore_target_not_empty',
        message: expect.stringMatching(/already hold.*--force/),
      });
      const forced = await restoreBackup(archive, { ...target, force: true, stewardVersion: VERSION });
      expect(forced.replaced).toBeTruthy();
      expect(existsSync(forced.replaced!)).toBe(true);
    }, 180_000);
  });

  describe('upgrades and schema versions', () => {
    it('backs up before pending migrations; a failed one is rolled back and says how to restore', async () => {
      const database = get();
      const dataDir = tmp('upgrade');
      const dir = migrationsDir(null, {
        '0151_broken.sql':
          "CREATE TABLE broken_probe (id int);\nINSERT INTO broken_probe VALUES (1);\nUPDATE users SET display_name = 'changed';\nSELECT 1 / 0;",
      });
      const lines: string[] = [];
      const beforeApply = backupBeforeMigrations({
        dataDir,
        skillsDir: path.join(dataDir, 'skills'),
        keep: 3,
        report: (line) => lines.push(line),
      })(database);
      const failure = await migrate(database, dir, { beforeApply }).catch((error: unknown) => error);
      const backups = await listBackups(dataDir);
      expect(backups.map((backup) => backup.reason)).toEqual(['pre-migrate']);
      expect(lines).toEqual([expect.stringContaining(backups[0]!.file)]);
      expect(failure).toMatchObject({
        code: 'migration_failed',
        message: expect.stringContaining(
          `Migration 0151_broken failed and was rolled back (nothing was applied in this run): division by zero. To go back to the database as it was before this upgrade: ${stewardCommand()} restore ${backups[0]!.file} --force`,
        ),
      });
      // Nothing of the failed migration stayed, and the database answers as before.
      expect(
        await database.query("SELECT 1 FROM information_schema.tables WHERE table_name = 'broken_probe'"),
      ).toEqual([]);
      expect(await database.query("SELECT 1 FROM steward_migrations WHERE name = '0151_broken'")).toEqual([]);
      expect(await database.query("SELECT display_name FROM users WHERE id = 'local'")).toEqual([
        { display_name: 'Local user' },
      ]);
    }, 60_000);

    it('restores an archive of an older schema and migrates it; refuses one of a newer schema', async () => {
      // The embedded template has every migration: an old embedded database starts from it emptied
      // of Steward's objects (the catalog initdb leaves, seconds sooner).
      const old =
        backend === 'pglite'
          ? await (async () => {
              const database = await openPglite(null);
              await database.transaction(dropStewardObjects);
              return { database, drop: () => database.close() };
            })()
          : await createTestDatabase(backend, { migrate: false });
      const dataDir = tmp('old');
      try {
        await migrate(old.database, migrationsDir('0004_memory'));
        await old.database.query("INSERT INTO users (id) VALUES ('bob')");
        await old.database.query(
          "INSERT INTO conversations (id, user_id, channel) VALUES ('c1', 'bob', 'cli')",
        );
        const [message] = await old.database.query<{ id: number }>(
          "INSERT INTO messages (conversation_id, user_id, role, content) VALUES ('c1', 'bob', 'user', 'hello from long ago') RETURNING id",
        );
        await old.database.query(
          "INSERT INTO turns (id, conversation_id, user_id, status, mode, user_message_id) VALUES ('t1', 'c1', 'bob', 'completed', 'multi_agent', $1)",
          [message!.id],
        );
        const archive = path.join(dataDir, 'old.tar.gz');
        const sources = {
          database: old.database,
          dataDir,
          skillsDir: path.join(dataDir, 'skills'),
          stewardVersion: '0.0.9',
        };
        await writeBackupFile(sources, archive);
        const target = await freshTarget(backend);
        try {
          const report = await restoreBackup(archive, { ...target, force: false, stewardVersion: VERSION });
          expect(report.migrated).toContain('0006_turn_queue');
          const restored = await target.open();
          try {
            // 0006 filled the new column from the restored rows: migrated after loading, not before.
            expect(await restored.query("SELECT request FROM turns WHERE id = 't1'")).toEqual([
              { request: 'hello from long ago' },
            ]);
            expect((await restored.query('SELECT id FROM users ORDER BY id')).map((row) => row.id)).toEqual([
              'bob',
              'local',
            ]);
          } finally {
            await restored.close();
          }
        } finally {
          await target.drop();
        }

        await old.database.query("INSERT INTO steward_migrations (name) VALUES ('9999_from_the_future')");
        const newer = path.join(dataDir, 'newer.tar.gz');
        await writeBackupFile({ ...sources, stewardVersion: '9.0.0' }, newer);
        const refused = await freshTarget(backend);
        try {
          await expect(
            restoreBackup(newer, { ...refused, force: false, stewardVersion: VERSION }),
          ).rejects.toMatchObject({
            code: 'backup_newer_schema',
            message: expect.stringMatching(
              /newer Steward \(9\.0\.0; this is 0\.1\.0\).*9999_from_the_future.*Upgrade Steward/,
            ),
          });
          expect(existsSync(path.join(refused.dataDir, 'db'))).toBe(false);
        } finally {
          await refused.drop();
        }
      } finally {
        await old.drop();
      }
    }, 180_000);

    if (backend === 'postgres')
      it('restores an embedded archive onto a server without pgvector, saying what it drops', async () => {
        const embedded = await openPglite(null);
        const dataDir = tmp('embedded');
        try {
          await migrate(embedded);
          const archive = path.join(dataDir, 'embedded.tar.gz');
          await writeBackupFile(
            { database: embedded, dataDir, skillsDir: path.join(dataDir, 'skills'), stewardVersion: VERSION },
            archive,
          );
          const target = await freshTarget(backend);
          try {
            const report = await restoreBackup(archive, { ...target, force: false, stewardVersion: VERSION });
            expect(report.load.dropped).toEqual([
              {
                name: 'memory_embeddings',
                rows: 0,
                reason: 'this PostgreSQL has no vector extension (pgvector)',
              },
            ]);
            const restored = await target.open();
            try {
              expect(
                await restored.query("SELECT name FROM steward_migrations WHERE name LIKE '%.vector'"),
              ).toEqual([]);
            } finally {
              await restored.close();
            }
          } finally {
            await target.drop();
          }
        } finally {
          await embedded.close();
        }
      }, 120_000);
  });
});

describe('archive checks', () => {
  it('lists and prunes kept backups', async () => {
    const database = await openPglite(null);
    const dataDir = tmp('kept');
    try {
      await migrate(database);
      for (let index = 1; index <= 4; index++) {
        const at = new Date(Date.parse('2026-11-27T03:00:00Z') + index * 60_000);
        const sources = {
          database,
          dataDir,
          skillsDir: path.join(dataDir, 'skills'),
          stewardVersion: VERSION,
          now: () => at,
        };
        await writeKeptBackup(sources, 'scheduled', 2);
      }
      const kept = await listBackups(dataDir);
      expect(kept.map((backup) => backup.at.toISOString())).toEqual([
        '2026-11-27T03:04:00.000Z',
        '2026-11-27T03:03:00.000Z',
      ]);
      const out = tmp('extract');
      const sums = await extractArchive(kept[0]!.file, out);
      expect([...sums.keys()][0]).toBe('manifest.json');
    } finally {
      await database.close();
    }
  }, 60_000);
});

/** A migrations folder with the real files up to and including `last`, plus `extra` files. */
function migrationsDir(last: string | null, extra: Record<string, string> = {}): string {
  const dir = tmp('migrations');
  for (const migration of listMigrations()) {
    if (last !== null && migration.name.replace(/\.vector$/, '') > last) continue;
    cpSync(path.join(MIGRATIONS_DIR, `${migration.name}.sql`), path.join(dir, `${migration.name}.sql`));
  }
  for (const [name, sql] of Object.entries(extra)) writeFileSync(path.join(dir, name), sql);
  return dir;
}

describeEachBackend('backup while turns and file writes run', (get, backend) => {
  it('restores to a consistent state: every completed write and turn of the snapshot is whole', async () => {
    const files = await startFilesRuntime(get());
    const archive = path.join(tmp('live'), 'live.tar.gz');
    let stop = false;
    let failure: unknown = null;
    const counts = { writes: 0, tasks: 0, turns: 0 };
    const loop = (body: (index: number) => Promise<void>) =>
      (async () => {
        try {
          for (let index = 0; !stop; index++) {
            await body(index);
            // In-memory PGlite answers through microtasks only: let timers (and the backup) run.
            await new Promise((resolve) => setImmediate(resolve));
          }
        } catch (error) {
          failure ??= error;
        }
      })();
    /** Waits until `done()`, failing at once when a writer failed, and after a minute. */
    const until = async (done: () => boolean, what: string) => {
      const deadline = Date.now() + 60_000;
      while (!done()) {
        if (failure) throw failure;
        if (Date.now() > deadline)
          throw new Error(`timed out waiting for ${what}: ${JSON.stringify(counts)}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const loops = [
      loop(async (index) => {
        const result = await files.run(
          `files.write --path live/note.md --content "version ${index}"`,
          'alice',
        );
        if (result.status !== 'ok') throw new Error(result.content);
        counts.writes++;
      }),
      loop(async (index) => {
        const result = await files.run(`tasks.create --title "live task ${index}"`, 'local');
        if (result.status !== 'ok') throw new Error(result.content);
        counts.tasks++;
      }),
      loop(async (index) => {
        await files.runtime.engine.handle({ userId: 'bob', text: `message ${index}`, channel: 'cli' });
        counts.turns++;
      }),
    ];
    try {
      // Let every writer get going (a file write is the slowest: one is enough), then back up while they run.
      await until(() => counts.writes >= 1 && counts.tasks >= 3 && counts.turns >= 3, 'the writers to start');
      const before = { ...counts };
      await writeBackupFile(sourcesOf(files, get()), archive);
      // The writers went on while it ran (on PGlite they waited only while the tables were read).
      await until(() => counts.writes > before.writes && counts.tasks > before.tasks, 'more writes');
    } finally {
      stop = true;
      await Promise.all(loops);
      await files.close();
    }
    expect(failure).toBeNull();
    const target = await freshTarget(backend);
    try {
      const report = await restoreBackup(archive, { ...target, force: false, stewardVersion: VERSION });
      const restored = await target.open();
      try {
        expect(await tableSums(restored)).toEqual(
          Object.fromEntries(
            report.manifest.database.tables.map((table) => [table.name, [table.rows, table.sha256]]),
          ),
        );
        // Every write the restored journal calls completed is in the restored vault, current or as a version.
        const vault = path.join(target.dataDir, 'files', 'alice');
        const present = new Set(Object.values(treeSums(vault)));
        const completed = await restored.query<{ content_hash: string }>(
          "SELECT content_hash FROM file_operations WHERE user_id = 'alice' AND operation = 'write' AND status = 'completed'",
        );
        expect(completed.length).toBeGreaterThan(0);
        for (const write of completed) expect(present.has(write.content_hash)).toBe(true);
        // Every completed turn has its question and its answer.
        expect(
          await restored.query(
            `SELECT t.id FROM turns t WHERE t.status = 'completed' AND (
               NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = t.user_message_id)
               OR NOT EXISTS (SELECT 1 FROM messages m WHERE m.turn_id = t.id AND m.role = 'assistant'))`,
          ),
        ).toEqual([]);
        const [tasks] = await restored.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM tasks WHERE title LIKE 'live task%'",
        );
        expect(tasks!.n).toBeGreaterThanOrEqual(3);
      } finally {
        await restored.close();
      }
    } finally {
      await target.drop();
    }
  }, 180_000);
});
