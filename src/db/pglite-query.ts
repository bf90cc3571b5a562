import { createRequire } from 'node:module';
import type { PGlite } from '@electric-sql/pglite';
import { queryMessage, readAnswer, statementMessages, type WireAnswer } from './pglite-wire.ts';
import { statementName } from './statement-name.ts';

// node-postgres's own parameter encoding (dates, arrays, JSON, buffers), so that both backends
// send the same SQL with the same values.
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as {
  prepareValue: (value: unknown) => unknown;
};

type Row = Record<string, unknown>;
type Result = { rows: Row[] };

/** Prepared statements a session keeps before they are all dropped and prepared again. */
const MAX_PREPARED = 2_000;
const UNDEFINED_PREPARED_STATEMENT = '26000';

/**
 * A first-come, first-served lock whose free acquisition costs no promise. PGlite's own locks
 * (two per query, each a generator-driven async mutex) cost about as much CPU as a short query.
 */
class SessionLock {
  #held = false;
  readonly #waiting: Array<() => void> = [];

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#held) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#held = true;
    try {
      return await fn();
    } finally {
      // The lock passes straight to the next waiter, if any; otherwise it is free.
      const next = this.#waiting.shift();
      if (next) next();
      else this.#held = false;
    }
  }
}

/** The session as a library's PGlite adapter expects it (pg-boss's `fromPglite`). */
export type PgliteLibrarySession = {
  query<T>(text: string, params?: unknown[]): Promise<{ rows: T[] }>;
  exec(text: string): Promise<Result[]>;
};

/** What a transaction's callback gets: the session itself, without taking the lock again. */
export type PgliteTransaction = {
  query<T extends Row>(text: string, params?: readonly unknown[]): Promise<T[]>;
  exec(text: string): Promise<void>;
};

/**
 * PGlite is one PostgreSQL session in this process, and everything Steward asks of it goes
 * through this one queue: a query, multi-statement SQL, a transaction for its whole length (no
 * statement of anyone else lands inside it), and the job queue's statements (`library`). Each
 * statement is driven on PostgreSQL's wire protocol directly: a parameterized query is one
 * exchange — Parse (once per statement text and session, as node-postgres does with named
 * statements), Bind, Describe, Execute, Sync — where `PGlite.query` makes six (it describes the
 * statement to learn parameter types first) and plans it again every time.
 */
export function pgliteSession(client: PGlite) {
  const lock = new SessionLock();
  const prepared = new Set<string>();
  let closed = false;

  /**
   * One exchange; its answer, the error in it not yet thrown. PostgreSQL's bytes come to us as
   * it writes them (views into its memory, copied at once) and are read in one pass.
   */
  async function send(message: Uint8Array): Promise<WireAnswer> {
    if (closed) throw new Error('The embedded database is closed.');
    const chunks: Uint8Array[] = [];
    await client.execProtocolRawStream(message, {
      // Steward opens PGlite on the node file system or in memory, whose syncToFs does nothing
      // (PostgreSQL writes through to the files itself): asking costs a lock round.
      syncToFs: false,
      // Our reader for this exchange. PGlite keeps it as its reader until the next exchange sets
      // another: nothing but this session may talk to the client (PGlite's own query methods
      // would find their answers read here).
      onRawData: (chunk) => {
        chunks.push(chunk.slice());
      },
    });
    return readAnswer(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), client.parsers);
  }

  function rethrow(answer: WireAnswer): WireAnswer {
    if (answer.error) throw answer.error;
    return answer;
  }

  /** Multi-statement SQL on the simple protocol: one result per statement. */
  async function simple(text: string): Promise<Result[]> {
    return rethrow(await send(queryMessage(text))).results;
  }

  async function exchange(text: string, params: readonly unknown[], inTransaction: boolean): Promise<Row[]> {
    const name = params.length > 0 ? statementName(text) : undefined;
    let parse = false;
    if (name === undefined || !prepared.has(name)) {
      if (name && prepared.size >= MAX_PREPARED && !inTransaction) {
        rethrow(await send(queryMessage('DEALLOCATE ALL')));
        prepared.clear();
      }
      parse = true;
    }
    const values = params.map(prepareValue) as Array<string | Uint8Array | null>;
    const answer = await send(statementMessages(text, name ?? '', values, parse));
    // A Parse that succeeded prepared the statement, even when a later step failed.
    if (name && answer.parsed) prepared.add(name);
    return rethrow(answer).results[0]?.rows ?? [];
  }

  async function statement<T extends Row>(
    text: string,
    params: readonly unknown[],
    inTransaction: boolean,
  ): Promise<T[]> {
    try {
      return (await exchange(text, params, inTransaction)) as T[];
    } catch (error) {
      // Something dropped the session's statements (DEALLOCATE, DISCARD): prepare them again.
      if ((error as { code?: string }).code !== UNDEFINED_PREPARED_STATEMENT || inTransaction) throw error;
      prepared.clear();
      return (await exchange(text, params, false)) as T[];
    }
  }

  const query = <T extends Row>(text: string, params: readonly unknown[] = []): Promise<T[]> =>
    lock.run(() => statement<T>(text, params, false));
  const exec = (text: string): Promise<Result[]> => lock.run(() => simple(text));

  const library: PgliteLibrarySession = {
    query: async <T>(text: string, params: unknown[] = []) => ({ rows: (await query(text, params)) as T[] }),
    exec,
  };

  return {
    query,
    exec: async (text: string): Promise<void> => {
      await exec(text);
    },
    transaction: <T>(fn: (tx: PgliteTransaction) => Promise<T>): Promise<T> =>
      lock.run(async () => {
        await simple('BEGIN');
        let result: T;
        try {
          result = await fn({
            query: (text, params = []) => statement(text, params, true),
            exec: async (text) => {
              await simple(text);
            },
          });
        } catch (error) {
          await simple('ROLLBACK').catch(() => undefined);
          throw error;
        }
        await simple('COMMIT');
        return result;
      }),
    library,
    close: () =>
      lock.run(async () => {
        if (closed) return;
        closed = true;
        await client.close();
      }),
  };
}
