import type { Queryable } from '../db/index.ts';

export type CatalogColumn = {
  name: string;
  /** As `format_type` spells it (`timestamp with time zone`, `text[]`, `vector`): the cast back from text. */
  type: string;
  /** Computed by the database (`GENERATED ALWAYS AS … STORED`): never dumped, recomputed on load. */
  generated: boolean;
  /** `GENERATED ALWAYS AS IDENTITY`: a load writes it with OVERRIDING SYSTEM VALUE. */
  identityAlways: boolean;
};

export type ForeignKey = {
  name: string;
  columns: string[];
  table: string;
  referencedColumns: string[];
  /** `FOREIGN KEY (…) REFERENCES …`, to add it again after a load. */
  definition: string;
};

export type CatalogTable = {
  name: string;
  columns: CatalogColumn[];
  primaryKey: string[];
  foreignKeys: ForeignKey[];
  /** Has triggers of its own (not constraint triggers): a load turns them off while it copies rows. */
  hasTriggers: boolean;
};

/** Every table of the schema Steward's migrations write (`public`), parents before the tables that reference them. */
export type Catalog = { tables: CatalogTable[] };

export const quoteIdent = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/** Reads the tables of the current schema from the system catalogs (the same on PGlite and a server). */
export async function readCatalog(db: Queryable): Promise<Catalog> {
  const columns = await db.query<{
    table_name: string;
    column_name: string;
    type: string;
    generated: boolean;
    identity_always: boolean;
  }>(
    `SELECT c.relname AS table_name, a.attname AS column_name, format_type(a.atttypid, a.atttypmod) AS type,
            a.attgenerated <> '' AS generated, a.attidentity = 'a' AS identity_always
     FROM pg_class c
     JOIN pg_namespace n ON n.oid = c.relnamespace
     JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
     WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
     ORDER BY c.relname, a.attnum`,
  );
  const constraints = await db.query<{
    table_name: string;
    name: string;
    kind: string;
    columns: string[];
    referenced_table: string | null;
    referenced_columns: string[] | null;
    definition: string;
  }>(
    `SELECT c.relname AS table_name, k.conname AS name, k.contype AS kind,
            ARRAY(SELECT a.attname FROM unnest(k.conkey) WITH ORDINALITY AS u(attnum, i)
                  JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.attnum ORDER BY u.i)::text[] AS columns,
            r.relname AS referenced_table,
            ARRAY(SELECT a.attname FROM unnest(k.confkey) WITH ORDINALITY AS u(attnum, i)
                  JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.attnum ORDER BY u.i)::text[] AS referenced_columns,
            pg_get_constraintdef(k.oid) AS definition
     FROM pg_constraint k
     JOIN pg_class c ON c.oid = k.conrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_class r ON r.oid = k.confrelid
     WHERE n.nspname = current_schema() AND k.contype IN ('p', 'f')
     ORDER BY c.relname, k.conname`,
  );
  const triggers = await db.query<{ table_name: string }>(
    `SELECT DISTINCT c.relname AS table_name FROM pg_trigger t
     JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = current_schema() AND NOT t.tgisinternal`,
  );
  const withTriggers = new Set(triggers.map((row) => row.table_name));
  const tables = new Map<string, CatalogTable>();
  for (const row of columns) {
    let table = tables.get(row.table_name);
    if (!table) {
      table = {
        name: row.table_name,
        columns: [],
        primaryKey: [],
        foreignKeys: [],
        hasTriggers: withTriggers.has(row.table_name),
      };
      tables.set(row.table_name, table);
    }
    table.columns.push({
      name: row.column_name,
      type: row.type,
      generated: row.generated,
      identityAlways: row.identity_always,
    });
  }
  for (const row of constraints) {
    const table = tables.get(row.table_name);
    if (!table) continue;
    if (row.kind === 'p') table.primaryKey = row.columns;
    else
      table.foreignKeys.push({
        name: row.name,
        columns: row.columns,
        table: row.referenced_table ?? '',
        referencedColumns: row.referenced_columns ?? [],
        definition: row.definition,
      });
  }
  return { tables: dependencyOrder([...tables.values()]) };
}

/** Tables sorted so that every table comes after the tables it references (ties by name). */
function dependencyOrder(tables: CatalogTable[]): CatalogTable[] {
  const byName = new Map(tables.map((table) => [table.name, table]));
  const ordered: CatalogTable[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (table: CatalogTable) => {
    if (state.has(table.name)) return; // done, or a cycle: break it here
    state.set(table.name, 'visiting');
    for (const key of table.foreignKeys) {
      const parent = byName.get(key.table);
      if (parent && parent !== table) visit(parent);
    }
    state.set(table.name, 'done');
    ordered.push(table);
  };
  for (const table of [...tables].sort((a, b) => a.name.localeCompare(b.name))) visit(table);
  return ordered;
}

/** The columns a dump holds: every column the database does not compute. */
export const storedColumns = (table: CatalogTable): CatalogColumn[] =>
  table.columns.filter((column) => !column.generated);
