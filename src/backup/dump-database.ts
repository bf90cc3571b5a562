import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Database, Queryable } from '../db/index.ts';
import { type CatalogTable, quoteIdent, readCatalog, storedColumns } from './table-catalog.ts';

export type DumpedTable = {
  name: string;
  columns: Array<{ name: string; type: string }>;
  rows: number;
  sha256: string;
  /** The rows as JSON lines: one array of column texts (or null) per row. */
  file: string;
};

export type DumpedSequence = { name: string; lastValue: number | null };

export type DatabaseDump = {
  backend: Database['backend'];
  vector: boolean;
  /** Applied migration names: the schema version. */
  migrations: string[];
  tables: DumpedTable[];
  sequences: DumpedSequence[];
};

/** Rows fetched from a table's cursor at a time. */
const FETCH_ROWS = 1_000;

/**
 * Writes every table of the database to `<dir>/<table>.jsonl` from one snapshot (a
 * REPEATABLE READ, read-only transaction): rows written while it reads are either all in it or
 * not at all. Each value is the database's own text form, which its type reads back exactly.
 * On PGlite (one connection) other queries wait while it reads; on a server they go on.
 */
export async function dumpDatabase(database: Database, dir: string): Promise<DatabaseDump> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return database.transaction(async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    // Text forms that do not depend on the session: UTC ISO times, hex bytea, exact floats.
    for (const setting of [
      "SET LOCAL TimeZone = 'UTC'",
      "SET LOCAL DateStyle = 'ISO, YMD'",
      "SET LOCAL IntervalStyle = 'postgres'",
      "SET LOCAL bytea_output = 'hex'",
      'SET LOCAL extra_float_digits = 1',
    ])
      await tx.query(setting);
    const catalog = await readCatalog(tx);
    const tables: DumpedTable[] = [];
    for (const table of catalog.tables) tables.push(await dumpTable(tx, table, dir));
    const migrations = catalog.tables.some((table) => table.name === 'steward_migrations')
      ? (
          await tx.query<{ name: string }>(
            `SELECT name FROM ${quoteIdent('steward_migrations')} ORDER BY name`,
          )
        ).map((row) => row.name)
      : [];
    const sequences = (
      await tx.query<{ name: string; last_value: number | null }>(
        'SELECT sequencename AS name, last_value FROM pg_sequences WHERE schemaname = current_schema() ORDER BY sequencename',
      )
    ).map((row) => ({ name: row.name, lastValue: row.last_value === null ? null : Number(row.last_value) }));
    return { backend: database.backend, vector: database.hasVector, migrations, tables, sequences };
  });
}

async function dumpTable(tx: Queryable, table: CatalogTable, dir: string): Promise<DumpedTable> {
  const columns = storedColumns(table);
  const file = path.join(dir, `${table.name}.jsonl`);
  const out = createWriteStream(file, { mode: 0o600 });
  const hash = createHash('sha256');
  let rows = 0;
  const values = columns.map((column) => `${quoteIdent(column.name)}::text`).join(', ');
  const order =
    table.primaryKey.length > 0
      ? table.primaryKey.map(quoteIdent).join(', ')
      : columns.map((column) => `${quoteIdent(column.name)}::text COLLATE "C"`).join(', ');
  // Ordered by primary key, so the same rows always make the same file (and checksum).
  await tx.query(
    `DECLARE steward_dump NO SCROLL CURSOR FOR SELECT to_json(ARRAY[${values}]::text[])::text AS line FROM ${quoteIdent(table.name)} ORDER BY ${order}`,
  );
  try {
    for (;;) {
      const batch = await tx.query<{ line: string }>(`FETCH ${FETCH_ROWS} FROM steward_dump`);
      if (batch.length === 0) break;
      const text = `${batch.map((row) => row.line).join('\n')}\n`;
      hash.update(text);
      rows += batch.length;
      if (!out.write(text)) await once(out, 'drain');
    }
  } finally {
    await tx.query('CLOSE steward_dump');
    out.end();
    await once(out, 'close');
  }
  return {
    name: table.name,
    columns: columns.map((column) => ({ name: column.name, type: column.type })),
    rows,
    sha256: hash.digest('hex'),
    file,
  };
}
