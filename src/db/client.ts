import { chmodSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import type pg from 'pg';
import { StewardError } from '../errors.ts';
import { type PgliteLibrarySession, pgliteSession } from './pglite-query.ts';
import { forgetPgliteTemplate, pgliteTemplate, unpackTemplateInto } from './pglite-template.ts';
import { statementName } from './statement-name.ts';

export type Row = Record<string, unknown>;

/** SQL access shared by both backends; a transaction hands out the same shape. */
export type Queryable = {
  query<T extends Row = Row>(text: string, params?: readonly unknown[]): Promise<T[]>;
};

/** A transaction's connection: queries, and multi-statement SQL (migrations) on that same connection. */
export type Transaction = Queryable & { exec(text: string): Promise<void> };

/**
 * One PostgreSQL database, embedded (PGlite) or a server (node-postgres). Code above this
 * file never asks which, except to know whether vectors are available.
 */
export type Database = Queryable & {
  readonly backend: 'pglite' | 'postgres';
  /**
   * The underlying connection, for libraries that need their own (the job queue): on PGlite the
   * session's queue (`session`), which every statement must go through, and the client itself
   * for what only it can do while nothing else runs (dumping a new template's data dir).
   */
  readonly connection:
    | { kind: 'pglite'; client: PGlite; session: PgliteLibrarySession }
    | { kind: 'postgres'; url: string };
  /** True once the `vector` extension is installed in this database. */
  hasVector: boolean;
  /** Runs multi-statement SQL (migrations). */
  exec(text: string): Promise<void>;
  /** Runs `fn` in one transaction; it commits when `fn` resolves and rolls back when it throws. */
  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
  /**
   * Runs `fn` while holding the session-level advisory lock for `key`, so that several
   * processes on one database never run it concurrently for the same key.
   */
  withAdvisoryLock<T>(key: string, fn: () => Promise<T>): Promise<T>;
  /** Like withAdvisoryLock, but runs `fn` only when the lock is free right now; null otherwise. */
  tryAdvisoryLock<T>(key: string, fn: () => Promise<T>): Promise<{ value: T } | null>;
  /**
   * Marks the instance `id` alive until `releaseInstance(id)` or until its process dies (on a
   * server: a session lock on a connection of its own, which Postgres drops with the process).
   */
  registerInstance(id: string): Promise<void>;
  releaseInstance(id: string): Promise<void>;
  /** Whether the instance `id` (this process or another) is alive. */
  instanceAlive(id: string): Promise<boolean>;
  close(): Promise<void>;
};

/**
 * PGlite's buffer pool, sized at open to the data the database holds beyond a new database's
 * (its catalogs and empty tables, NEW_DATABASE_MB), between these bounds (MB): a small database
 * keeps a small footprint (PGlite touches much of its pool, and as much again of C heap, at
 * start: 8 MB instead of 25 MB is 32 MB less resident memory), and a large one is not re-read
 * from its files on every search. With 16 MB at 100k memories, each vector search re-read its
 * HNSW index pages and each full-text search its heap pages: index lookup p50 15 ms against
 * 4 ms with 128 MB, full text 18 ms against 10 ms (bench/memory-search.bench.ts).
 */
const PGLITE_SHARED_BUFFERS_MB = { min: 8, max: 128 };
/** The files of a new database (the template `npm install` builds), MB. */
const NEW_DATABASE_MB = 24;

function pgliteSharedBuffers(dir: string | undefined): string {
  const bytes = dir ? filesSize(path.join(dir, 'base')) : 0;
  const mb = Math.ceil(bytes / 2 ** 20) - NEW_DATABASE_MB;
  return `${Math.min(PGLITE_SHARED_BUFFERS_MB.max, Math.max(PGLITE_SHARED_BUFFERS_MB.min, mb))}MB`;
}

/** Bytes of the files under `dir` (0 when it does not exist). */
function filesSize(dir: string): number {
  if (!existsSync(dir)) return 0;
  let bytes = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) bytes += statSync(path.join(entry.parentPath, entry.name)).size;
  }
  return bytes;
}

const INT8 = 20;
const NUMERIC = 1700;

const PGLITE_DIST = path.dirname(fileURLToPath(import.meta.resolve('@electric-sql/pglite')));
type WasmModule = NonNullable<PGliteOptions['pgliteWasmModule']>;
/** The one WebAssembly call made here (this project's TypeScript libraries leave out the DOM's). */
declare const WebAssembly: { compile(bytes: Uint8Array): Promise<WasmModule> };
let pgliteModule: Promise<WasmModule> | undefined;

/**
 * PostgreSQL's WebAssembly, compiled once per process: PGlite otherwise compiles the 9 MB module
 * for every database it opens. A server opens one; a process that opens several (a test worker)
 * shares it, and the machine code V8 compiles for one instance then serves them all.
 */
function pgliteModuleOnce(): Promise<WasmModule> {
  if (!pgliteModule) {
    baselineCompilerOnly();
    pgliteModule = readFile(path.join(PGLITE_DIST, 'pglite.wasm')).then((bytes) =>
      WebAssembly.compile(bytes),
    );
  }
  pgliteModule.catch(() => {
    pgliteModule = undefined;
  });
  return pgliteModule;
}

/**
 * PostgreSQL's WebAssembly runs on V8's baseline compiler only (docs/DESIGN.md, "Node runs with
 * `--liftoff-only`"). The launchers pass `--liftoff-only`; a process started another way (the
 * tests, the benches, `node bin/steward.js`) would have V8 compile the database's hot functions
 * again on background threads through its first hundreds of turns: ~20 instead of ~8 ms of CPU
 * a turn (the engine bench on two cores), and turns of 20–45 ms while it lasts. The two settings
 * that flag implies are read when a module compiles, so they are set here, before the one compile.
 */
function baselineCompilerOnly(): void {
  v8.setFlagsFromString('--no-wasm-dynamic-tiering');
  v8.setFlagsFromString('--no-wasm-tier-up');
}

/** Opens the embedded database in `<dataDir>/db`, or in memory for `dataDir: null`. */
export async function openPglite(
  dataDir: string | null,
  options: { template?: boolean } = {},
): Promise<Database> {
  let dir: string | undefined;
  if (dataDir) {
    dir = path.join(dataDir, 'db');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }
  // A new cluster starts from the prebuilt template instead of running initdb (seconds faster):
  // on disk unpacked by Steward, else (in memory, or that failed) loaded by PGlite.
  // PostgreSQL's WebAssembly compiles on other threads while the template unpacks on this one.
  const wasmModule = pgliteModuleOnce();
  let fresh = dir === undefined || !existsSync(path.join(dir, 'PG_VERSION'));
  if (fresh && dir !== undefined && options.template !== false && (await unpackTemplateInto(dir))) {
    chmodSync(dir, 0o700);
    fresh = false;
  }
  const template = fresh && options.template !== false ? pgliteTemplate() : null;
  const client = await PGlite.create(dir, {
    ...(template ? { loadDataDir: template } : {}),
    pgliteWasmModule: await wasmModule,
    extensions: { vector },
    // One connection in one process: a buffer pool no larger than the database (PGlite's default
    // is 128 MB), the rest of Postgres's memory settings at their defaults.
    postgresqlconf: [`shared_buffers=${pgliteSharedBuffers(dir)}`],
    parsers: { [INT8]: (value: string) => Number(value), [NUMERIC]: (value: string) => Number(value) },
  });
  // The unpacked template stays in memory for the next in-memory database (a test worker opens
  // many); a process with a data dir opens one and need not keep 42 MB for nothing.
  if (template && dir !== undefined) forgetPgliteTemplate();
  // PGlite is one session: every statement, transaction and job-queue call waits its turn in one queue.
  const session = pgliteSession(client);
  const instances = new Set<string>();
  const database: Database = {
    backend: 'pglite',
    connection: { kind: 'pglite', client, session: session.library },
    hasVector: false,
    query: session.query,
    exec: session.exec,
    transaction: session.transaction,
    // One connection means one process: the in-process queue is the lock.
    withAdvisoryLock: (_key, fn) => fn(),
    tryAdvisoryLock: async (_key, fn) => ({ value: await fn() }),
    // One process owns the data dir (the lock file): instances of earlier processes are gone.
    registerInstance: async (id) => {
      instances.add(id);
    },
    releaseInstance: async (id) => {
      instances.delete(id);
    },
    instanceAlive: async (id) => instances.has(id),
    close: session.close,
  };
  await session.exec('CREATE EXTENSION IF NOT EXISTS vector');
  database.hasVector = true;
  return database;
}

/** Opens a PostgreSQL server through a node-postgres pool. */
export async function openPostgres(
  url: string,
  options: { max?: number; lockConnections?: number; applicationName?: string } = {},
): Promise<Database> {
  // node-postgres is loaded only here: a process on the embedded database never needs it.
  const { default: postgres } = await import('pg');
  const applicationName = options.applicationName ?? 'steward';
  const types = {
    getTypeParser: (oid: number, format?: string) => {
      if (oid === INT8 || oid === NUMERIC) return (value: string) => Number(value);
      return postgres.types.getTypeParser(oid, format as 'text');
    },
  };
  const pool = new postgres.Pool({
    connectionString: url,
    max: options.max ?? 10,
    types,
    application_name: applicationName,
  });
  pool.on('error', () => {
    // An idle client lost its connection; the pool replaces it on the next checkout.
  });
  try {
    const probe = await pool.connect();
    probe.release();
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw new StewardError(
      'database_unreachable',
      `Cannot connect to DATABASE_URL: ${describePgError(error)}`,
      {
        cause: error,
      },
    );
  }
  // Parameterized statements are prepared once per connection (named by their text's hash):
  // the server then skips parsing and planning on every later call.
  const query = async <T extends Row>(text: string, params: readonly unknown[] = []) =>
    (
      await pool.query(
        params.length > 0 ? { name: statementName(text), text, values: params as unknown[] } : text,
      )
    ).rows as T[];
  // A session advisory lock pins its connection for as long as it is held (a whole turn).
  // Locks get their own pool, so held locks can never starve the queries run under them.
  let locks: pg.Pool | null = null;
  const instanceClients = new Map<string, pg.Client>();
  const lockPool = () => {
    if (!locks) {
      locks = new postgres.Pool({
        connectionString: url,
        max: options.lockConnections ?? 20,
        application_name: `${applicationName}-locks`,
      });
      locks.on('error', () => {});
    }
    return locks;
  };
  const database: Database = {
    backend: 'postgres',
    connection: { kind: 'postgres', url },
    hasVector: false,
    query,
    exec: async (text) => {
      await pool.query(text);
    },
    transaction: async (fn) => {
      const client = await pool.connect();
      const stopListening = ignoreErrorsWhileCheckedOut(client);
      try {
        await client.query('BEGIN');
        const result = await fn({
          query: async (text, params = []) => (await client.query(text, params as unknown[])).rows,
          exec: async (text) => {
            await client.query(text);
          },
        });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        stopListening();
        client.release();
      }
    },
    withAdvisoryLock: async (key, fn) => {
      const client = await lockPool().connect();
      const stopListening = ignoreErrorsWhileCheckedOut(client);
      let broken = false;
      try {
        await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [key]);
        try {
          return await fn();
        } finally {
          await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [key]).catch((error) => {
            // A lost connection released the lock with it; the connection is discarded.
            broken = true;
            throw error;
          });
        }
      } finally {
        stopListening();
        client.release(broken);
      }
    },
    tryAdvisoryLock: async (key, fn) => {
      const client = await lockPool().connect();
      const stopListening = ignoreErrorsWhileCheckedOut(client);
      try {
        const rows = await client.query<{ locked: boolean }>(
          'SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked',
          [key],
        );
        if (!rows.rows[0]?.locked) return null;
        try {
          return { value: await fn() };
        } finally {
          await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [key]);
        }
      } finally {
        stopListening();
        client.release();
      }
    },
    registerInstance: async (id) => {
      if (instanceClients.has(id)) return;
      const client = new postgres.Client({
        connectionString: url,
        application_name: `${applicationName}-instance`,
      });
      client.on('error', () => {
        // The connection dropped: peers will see this instance as gone. Nothing to do here.
      });
      await client.connect();
      await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [instanceKey(id)]);
      instanceClients.set(id, client);
    },
    releaseInstance: async (id) => {
      const client = instanceClients.get(id);
      instanceClients.delete(id);
      await client?.end().catch(() => undefined);
    },
    instanceAlive: async (id) => {
      if (instanceClients.has(id)) return true;
      // From the query pool, never the lock pool: this is asked while holding a conversation's
      // lock, and a full lock pool would then wait on itself.
      const client = await pool.connect();
      try {
        const rows = await client.query<{ free: boolean }>(
          'SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS free',
          [instanceKey(id)],
        );
        if (!rows.rows[0]?.free) return true;
        await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [instanceKey(id)]);
        return false;
      } finally {
        client.release();
      }
    },
    close: async () => {
      for (const client of instanceClients.values()) await client.end().catch(() => undefined);
      instanceClients.clear();
      await locks?.end();
      await pool.end();
    },
  };
  database.hasVector = await tryEnableVector(database);
  return database;
}

const instanceKey = (id: string) => `steward-instance:${id}`;

/**
 * A checked-out client whose connection drops emits 'error'; unheard, that would end the
 * process. The query in flight rejects anyway, which is where the failure is handled.
 */
function ignoreErrorsWhileCheckedOut(client: pg.PoolClient): () => void {
  const ignore = () => {};
  client.on('error', ignore);
  return () => client.off('error', ignore);
}

async function tryEnableVector(database: Database): Promise<boolean> {
  const available = await database.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'");
  if (available.length === 0) return false;
  try {
    await database.exec('CREATE EXTENSION IF NOT EXISTS vector');
    return true;
  } catch {
    return false;
  }
}

function describePgError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: string }).code;
  return code ? `${message} (${code})` : message;
}

export async function serverVersion(database: Queryable): Promise<string> {
  const rows = await database.query<{ version: string }>(
    "SELECT current_setting('server_version') AS version",
  );
  return rows[0]?.version ?? 'unknown';
}
