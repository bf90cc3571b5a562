import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  acquireDataDirLock,
  listMigrations,
  migrate,
  openPglite,
  openPostgres,
  pendingMigrations,
  readLockOwner,
} from '../src/db/index.ts';
import { templatePath, unpackTemplateInto } from '../src/db/pglite-template.ts';
import { DataDirLockedError } from '../src/errors.ts';
import { describeEachBackend } from './support/db.ts';

describeEachBackend('database', (getDb, backend, testDatabase) => {
  it('applies every migration once and reports none pending', async () => {
    const database = getDb();
    expect(await pendingMigrations(database)).toEqual([]);
    expect(await migrate(database)).toEqual([]);
    const applied = await database.query<{ name: string }>(
      'SELECT name FROM steward_migrations ORDER BY name',
    );
    const expected = listMigrations()
      .filter((migration) => !migration.needsVector || database.hasVector)
      .map((migration) => migration.name);
    expect(applied.map((row) => row.name)).toEqual(expected);
  });

  it('knows whether vectors are available', () => {
    // PGlite ships pgvector; the PostgreSQL server on these machines does not.
    expect(getDb().hasVector).toBe(backend === 'pglite');
  });

  it('keeps channel message ids unique per channel', async () => {
    const database = getDb();
    await database.query(
      "INSERT INTO conversations (id, user_id, channel) VALUES ('c1', 'local', 'telegram')",
    );
    const insert = (channel: string) =>
      database.query(
        "INSERT INTO messages (conversation_id, user_id, role, content, channel, channel_message_id) VALUES ('c1', 'local', 'user', 'hi', $1, '42')",
        [channel],
      );
    await insert('telegram');
    await insert('slack');
    await expect(insert('telegram')).rejects.toThrow();
  });

  it('rolls a failing transaction back', async () => {
    const database = getDb();
    await expect(
      database.transaction(async (tx) => {
        await tx.query("INSERT INTO users (id) VALUES ('rollback-me')");
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await database.query("SELECT id FROM users WHERE id = 'rollback-me'")).toEqual([]);
  });

  if (backend === 'postgres') {
    it('never starves queries while more locks are held than the query pool has connections', async () => {
      const { url } = testDatabase();
      const small = await openPostgres(url!, { max: 2, lockConnections: 8 });
      try {
        const results = await Promise.all(
          Array.from({ length: 6 }, (_, index) =>
            small.withAdvisoryLock(`starve-${index}`, async () => {
              await new Promise((resolve) => setTimeout(resolve, 20));
              const rows = await small.query<{ n: number }>('SELECT $1::int AS n', [index]);
              return rows[0]!.n;
            }),
          ),
        );
        expect(results).toEqual([0, 1, 2, 3, 4, 5]);
      } finally {
        await small.close();
      }
    });
  }

  it('serializes work under one advisory lock key', async () => {
    const database = getDb();
    const order: string[] = [];
    const section = (name: string) =>
      database.withAdvisoryLock('test-key', async () => {
        order.push(`${name}:in`);
        await new Promise((resolve) => setTimeout(resolve, 30));
        order.push(`${name}:out`);
      });
    if (backend === 'postgres') {
      await Promise.all([section('a'), section('b')]);
      expect(order.join(' ')).toMatch(/^(a:in a:out b:in b:out|b:in b:out a:in a:out)$/);
    } else {
      await section('a');
      expect(order).toEqual(['a:in', 'a:out']);
    }
  });
});

describe('new data dirs from the template', () => {
  it('start unpacked from the template, already migrated, with nothing left over', async () => {
    expect(existsSync(templatePath())).toBe(true);
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'steward-template-'));
    const db = await openPglite(dataDir);
    try {
      expect(await pendingMigrations(db)).toEqual([]);
      expect(await db.query('SELECT count(*)::int AS n FROM users')).toEqual([{ n: 1 }]);
    } finally {
      await db.close();
    }
    expect(readdirSync(dataDir).filter((name) => name.includes('.tmp'))).toEqual([]);
  });

  it('never unpacks over files already in the directory', async () => {
    const dir = path.join(mkdtempSync(path.join(os.tmpdir(), 'steward-template-')), 'db');
    expect(await unpackTemplateInto(dir)).toBe(true);
    expect(existsSync(path.join(dir, 'PG_VERSION'))).toBe(true);
    const busy = mkdtempSync(path.join(os.tmpdir(), 'steward-template-'));
    writeFileSync(path.join(busy, 'something'), 'x');
    expect(await unpackTemplateInto(busy)).toBe(false);
    expect(readdirSync(busy)).toEqual(['something']);
  });
});

describe('embedded database buffer pool', () => {
  it('is small for a small database and grows with the database at the next open', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'steward-pool-'));
    const poolOf = async (db: Awaited<ReturnType<typeof openPglite>>) =>
      (await db.query<{ shared_buffers: string }>('SHOW shared_buffers'))[0]?.shared_buffers;
    let db = await openPglite(dataDir);
    try {
      // A new data dir is a copy of the empty template cluster (catalogs and indexes, ~25 MB),
      // which holds no data of its own: the smallest pool.
      expect(await poolOf(db)).toBe('8MB');
      // ~40 MB of rows that do not compress.
      await db.exec(
        `CREATE TABLE filler AS SELECT g, (SELECT string_agg(md5(i || random()::text || g), '') FROM generate_series(1, 30) i) AS text
         FROM generate_series(1, 40000) g`,
      );
      await db.close();
      db = await openPglite(dataDir);
      const mb = Number.parseInt((await poolOf(db)) ?? '', 10);
      expect(mb).toBeGreaterThanOrEqual(40);
      expect(mb).toBeLessThanOrEqual(128);
    } finally {
      await db.close();
    }
  });
});

describe('data dir lock', () => {
  const dir = () => mkdtempSync(path.join(os.tmpdir(), 'steward-lock-'));

  it('records the owner and its port, and releases', () => {
    const dataDir = dir();
    const lock = acquireDataDirLock(dataDir);
    lock.setPort(4321);
    expect(readLockOwner(dataDir)).toMatchObject({ pid: process.pid, port: 4321 });
    lock.release();
    expect(readLockOwner(dataDir)).toBeNull();
  });

  it('takes over a stale lock left by a dead process', async () => {
    const dataDir = dir();
    const child = spawn(process.execPath, ['-e', '0']);
    const deadPid = child.pid!;
    await new Promise((resolve) => child.on('exit', resolve));
    writeFileSync(
      path.join(dataDir, 'steward.lock'),
      JSON.stringify({ pid: deadPid, port: 1, startedAt: '' }),
    );
    const lock = acquireDataDirLock(dataDir);
    expect(readLockOwner(dataDir)?.pid).toBe(process.pid);
    lock.release();
  });

  it('refuses a live owner and names it', () => {
    const dataDir = dir();
    const parentPid = process.ppid;
    writeFileSync(
      path.join(dataDir, 'steward.lock'),
      JSON.stringify({ pid: parentPid, port: 3999, startedAt: '' }),
    );
    expect(() => acquireDataDirLock(dataDir)).toThrow(DataDirLockedError);
    expect(() => acquireDataDirLock(dataDir)).toThrow(
      new RegExp(`process ${parentPid} serving on port 3999`),
    );
  });
});
