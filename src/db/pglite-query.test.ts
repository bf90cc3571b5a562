import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openPglite } from './client.ts';

describe('PGlite queries as one protocol exchange', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openPglite(null);
    await database.exec(
      'CREATE TABLE probe (id int PRIMARY KEY, at timestamptz, tags text[], doc jsonb, flag boolean, big bigint, raw bytea)',
    );
  });
  afterAll(() => database.close());

  it('sends values as node-postgres does and parses results by type', async () => {
    const at = new Date('2026-11-26T01:02:03.456Z');
    await database.query(
      'INSERT INTO probe (id, at, tags, doc, flag, big, raw) VALUES ($1, $2, $3, $4, $5, $6, $7)',
      [
        1,
        at,
        ['a', 'b "c"'],
        JSON.stringify({ k: [1, 2] }),
        true,
        9_007_199_254_740_991,
        Buffer.from([0, 255]),
      ],
    );
    const [row] = await database.query('SELECT * FROM probe WHERE id = $1', [1]);
    expect(row).toEqual({
      id: 1,
      at,
      tags: ['a', 'b "c"'],
      doc: { k: [1, 2] },
      flag: true,
      big: 9_007_199_254_740_991,
      raw: new Uint8Array([0, 255]),
    });
    expect(await database.query('SELECT $1::text AS nothing', [null])).toEqual([{ nothing: null }]);
  });

  it('prepares a statement once when callers run it at the same time', async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, index) => database.query('SELECT $1::int * 2 AS twice', [index])),
    );
    expect(results.map((rows) => rows[0]?.twice)).toEqual([0, 2, 4, 6, 8, 10, 12, 14]);
  });

  it('throws the database error and keeps the statement usable afterwards', async () => {
    const insert = 'INSERT INTO probe (id) VALUES ($1)';
    await database.query(insert, [2]);
    await expect(database.query(insert, [2])).rejects.toMatchObject({
      code: '23505',
      message: expect.stringMatching(/duplicate key/),
    });
    await database.query(insert, [3]);
    expect(await database.query('SELECT count(*)::int AS n FROM probe WHERE id IN ($1, $2)', [2, 3])).toEqual(
      [{ n: 2 }],
    );
  });

  it('prepares statements again after something dropped them', async () => {
    const text = 'SELECT $1::text AS echo';
    expect(await database.query(text, ['one'])).toEqual([{ echo: 'one' }]);
    await database.exec('DEALLOCATE ALL');
    expect(await database.query(text, ['two'])).toEqual([{ echo: 'two' }]);
  });

  it('runs queries of a transaction inside it, and rolls them back with it', async () => {
    await expect(
      database.transaction(async (tx) => {
        await tx.query('INSERT INTO probe (id) VALUES ($1)', [10]);
        expect(await tx.query('SELECT count(*)::int AS n FROM probe WHERE id = $1', [10])).toEqual([
          { n: 1 },
        ]);
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    expect(await database.query('SELECT count(*)::int AS n FROM probe WHERE id = $1', [10])).toEqual([
      { n: 0 },
    ]);
  });

  it('keeps every other statement out of an open transaction until it ends', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const transaction = database.transaction(async (tx) => {
      await tx.query('INSERT INTO probe (id) VALUES ($1)', [20]);
      entered();
      await held;
      throw new Error('undo');
    });
    await inside;
    // Neither a plain query nor the job queue's adapter may run inside the transaction: were they
    // to, the first would see the uncommitted row and the second's row would be rolled back with it.
    const seen = database.query('SELECT count(*)::int AS n FROM probe WHERE id = $1', [20]);
    const connection = database.connection;
    if (connection.kind !== 'pglite') throw new Error('expected PGlite');
    const library = connection.session.exec('INSERT INTO probe (id) VALUES (21)');
    release();
    await expect(transaction).rejects.toThrow('undo');
    expect(await seen).toEqual([{ n: 0 }]);
    await library;
    expect(
      (await connection.session.query<{ id: number }>('SELECT id FROM probe WHERE id IN ($1, $2)', [20, 21]))
        .rows,
    ).toEqual([{ id: 21 }]);
  });

  it('reads errors with their fields, many results, text in any script and answers of many chunks', async () => {
    await expect(database.query('INSERT INTO probe (id) VALUES ($1)', [null])).rejects.toMatchObject({
      name: 'error',
      severity: 'ERROR',
      code: '23502',
      table: 'probe',
      column: 'id',
      message: expect.stringMatching(/null value in column "id"/),
    });
    await expect(database.exec('SELECT 1; SELEC 2')).rejects.toMatchObject({ code: '42601', position: '11' });
    const connection = database.connection;
    if (connection.kind !== 'pglite') throw new Error('expected PGlite');
    const results = await connection.session.exec(
      "SELECT 1 AS a; DO $$ BEGIN RAISE NOTICE 'ignored'; END $$; SELECT 'x' AS b, 'y' AS b",
    );
    expect(results.map((result) => result.rows)).toEqual([[{ a: 1 }], [], [{ b: 'y' }]]);
    expect((await connection.session.exec('')).map((result) => result.rows)).toEqual([[]]);
    const text = 'Grüße, 東京 🌸 — ok';
    expect(await database.query('SELECT $1::text AS t, length($1) AS n', [text])).toEqual([
      { t: text, n: [...text].length },
    ]);
    // Far more than PGlite writes at once: the answer comes in many pieces.
    const rows = await database.query<{ i: number; pad: string }>(
      "SELECT i, repeat('é', 500) AS pad FROM generate_series(1, $1::int) i",
      [2_000],
    );
    expect(rows).toHaveLength(2_000);
    expect(rows.at(-1)).toEqual({ i: 2_000, pad: 'é'.repeat(500) });
  });

  it('says the database is closed to a statement that comes after close', async () => {
    const other = await openPglite(null);
    await other.close();
    await expect(other.query('SELECT $1::int AS x', [1])).rejects.toThrow('The embedded database is closed.');
  });
});
