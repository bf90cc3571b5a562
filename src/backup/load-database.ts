import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { listMigrations, MIGRATIONS_DIR, type MigrationSession, replayMigrations } from '../db/index.ts';
import { StewardError } from '../errors.ts';
import { type CatalogTable, quoteIdent, readCatalog } from './table-catalog.ts';

/** A table as an archive holds it: its columns and a JSON-lines file of rows (see dumpDatabase). */
export type ArchivedTable = {
  name: string;
  columns: Array<{ name: string; type: string }>;
  rows: number;
  file: string;
};

export type LoadInput = {
  migrations: string[];
  tables: ArchivedTable[];
  sequences: Array<{ name: string; lastValue: number | null }>;
};

export type LoadReport = {
  /** Migrations applied to rebuild the archive's schema. */
  replayed: string[];
  tables: Array<{ name: string; rows: number }>;
  /** Archived tables this database cannot hold (no vector extension), with their row counts. */
  dropped: Array<{ name: string; rows: number; reason: string }>;
};

/** Rows sent in one INSERT, and the most text one INSERT carries. */
const BATCH_ROWS = 500;
const BATCH_CHARS = 4_000_000;

/**
 * Rebuilds the archive's schema on `session` (its migrations, those this database can run),
 * empties every table and loads the archive's rows, inside the caller's transaction. Foreign
 * keys are dropped while rows go in (any order, self-references included) and added back, which
 * checks every row; tables' own triggers are off meanwhile (derived rows come from the archive).
 * Sequences continue where the archive's were.
 */
export async function loadDatabase(
  session: MigrationSession,
  input: LoadInput,
  options: { hasVector: boolean; migrationsDir?: string },
): Promise<LoadReport> {
  const dir = options.migrationsDir ?? MIGRATIONS_DIR;
  const known = new Map(listMigrations(dir).map((migration) => [migration.name, migration]));
  const unknown = input.migrations.filter((name) => !known.has(name));
  if (unknown.length > 0)
    throw new StewardError('backup_newer_schema', `unknown migrations in the archive: ${unknown.join(', ')}`);
  const needed = new Set(
    input.migrations.filter((name) => options.hasVector || !known.get(name)?.needsVector),
  );
  const replayed = await replayMigrations(session, needed, dir);
  const catalog = await readCatalog(session);
  const tables = new Map(catalog.tables.map((table) => [table.name, table]));
  for (const table of catalog.tables)
    await alterTable(session, table.name, [
      ...table.foreignKeys.map((key) => `DROP CONSTRAINT ${quoteIdent(key.name)}`),
      ...(table.hasTriggers ? ['DISABLE TRIGGER USER'] : []),
    ]);
  // Only the tables that hold rows (those the migrations seed): truncating a table gives it new
  // files, which for every table took 2 s of a restore on a server and 0.5 s of CPU on PGlite.
  const filled = await tablesWithRows(session, catalog.tables);
  if (filled.length > 0) await session.exec(`TRUNCATE ${filled.map(quoteIdent).join(', ')}`);
  const report: LoadReport = { replayed, tables: [], dropped: [] };
  for (const archived of input.tables) {
    const table = tables.get(archived.name);
    if (!table) {
      report.dropped.push({
        name: archived.name,
        rows: archived.rows,
        reason: options.hasVector
          ? 'this Steward has no such table'
          : 'this PostgreSQL has no vector extension (pgvector)',
      });
      continue;
    }
    const rows = await loadTable(session, table, archived);
    if (rows !== archived.rows)
      throw new StewardError(
        'backup_damaged',
        `${archived.name}: the archive lists ${archived.rows} rows but holds ${rows}`,
      );
    report.tables.push({ name: archived.name, rows });
  }
  // Only the migrations this database ran count as applied (a skipped .vector one runs later, if ever).
  if (tables.has('steward_migrations'))
    await session.query(
      `DELETE FROM ${quoteIdent('steward_migrations')} WHERE NOT (name = ANY($1::text[]))`,
      [[...needed]],
    );
  for (const table of catalog.tables)
    await alterTable(session, table.name, [
      ...table.foreignKeys.map((key) => `ADD CONSTRAINT ${quoteIdent(key.name)} ${key.definition}`),
      ...(table.hasTriggers ? ['ENABLE TRIGGER USER'] : []),
    ]);
  const sequences = new Set(
    (
      await session.query<{ name: string }>(
        'SELECT sequencename AS name FROM pg_sequences WHERE schemaname = current_schema()',
      )
    ).map((row) => row.name),
  );
  for (const sequence of input.sequences) {
    if (sequence.lastValue === null || !sequences.has(sequence.name)) continue;
    await session.query('SELECT setval($1::regclass, $2, true)', [
      quoteIdent(sequence.name),
      sequence.lastValue,
    ]);
  }
  return report;
}

/** One ALTER TABLE for all of a table's `actions` (one statement instead of one per key). */
async function alterTable(session: MigrationSession, table: string, actions: string[]): Promise<void> {
  if (actions.length > 0) await session.exec(`ALTER TABLE ${quoteIdent(table)} ${actions.join(', ')}`);
}

/** The names of the tables among `tables` that hold at least one row, in one query. */
async function tablesWithRows(session: MigrationSession, tables: CatalogTable[]): Promise<string[]> {
  if (tables.length === 0) return [];
  const probes = tables.map(
    (table, index) =>
      `SELECT $${index + 1}::text AS name WHERE EXISTS (SELECT 1 FROM ${quoteIdent(table.name)})`,
  );
  const rows = await session.query<{ name: string }>(
    probes.join(' UNION ALL '),
    tables.map((table) => table.name),
  );
  return rows.map((row) => row.name);
}

async function loadTable(
  session: MigrationSession,
  table: CatalogTable,
  archived: ArchivedTable,
): Promise<number> {
  const targets = new Map(table.columns.map((column) => [column.name, column]));
  for (const column of archived.columns) {
    const target = targets.get(column.name);
    if (!target || target.generated)
      throw new StewardError(
        'backup_schema_mismatch',
        `${table.name}.${column.name} is in the archive but not a stored column here: the schema did not rebuild as the archive's`,
      );
  }
  const overriding = archived.columns.some((column) => targets.get(column.name)?.identityAlways)
    ? ' OVERRIDING SYSTEM VALUE'
    : '';
  // Each value is cast from its text form by the column's own type, as the dump wrote it.
  const insert = `INSERT INTO ${quoteIdent(table.name)} (${archived.columns.map((column) => quoteIdent(column.name)).join(', ')})${overriding}
    SELECT ${archived.columns.map((column, index) => `CAST(r->>${index} AS ${targets.get(column.name)!.type})`).join(', ')}
    FROM json_array_elements($1::json) AS r`;
  let batch: string[] = [];
  let chars = 0;
  let rows = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    await session.query(insert, [`[${batch.join(',')}]`]);
    rows += batch.length;
    batch = [];
    chars = 0;
  };
  const lines = createInterface({ input: createReadStream(archived.file, 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) {
    if (line === '') continue;
    batch.push(line);
    chars += line.length;
    if (batch.length >= BATCH_ROWS || chars >= BATCH_CHARS) await flush();
  }
  await flush();
  return rows;
}
