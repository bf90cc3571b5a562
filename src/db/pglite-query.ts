import { createRequire } from 'node:module';
import { type PGlite, parse, protocol } from '@electric-sql/pglite';
import { statementName } from './statement-name.ts';

// node-postgres's own parameter encoding (dates, arrays, JSON, buffers), so that both backends
// send the same SQL with the same values.
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as {
  prepareValue: (value: unknown) => unknown;
};

type Message = { name: string };
type Row = Record<string, unknown>;
type Result = { rows: Row[] };

/** Prepared statements a session keeps before they are all dropped and prepared again. */
const MAX_PREPARED = 2_000;
const UNDEFINED_PREPARED_STATEMENT = '26000';

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

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

  /** One exchange; its messages, the error among them not yet thrown. */
  async function send(message: Uint8Array): Promise<Message[]> {
    if (closed) throw new Error('The embedded database is closed.');
    const { messages } = await client.execProtocol(message, {
      // Steward opens PGlite on the node file system or in memory, whose syncToFs does nothing
      // (PostgreSQL writes through to the files itself): asking costs a lock round.
      syncToFs: false,
      throwOnError: false,
    });
    return messages as Message[];
  }

  function rethrow(messages: Message[]): Message[] {
    const error = messages.find((message) => message.name === 'error');
    if (error) throw error;
    return messages;
  }

  /** Multi-statement SQL on the simple protocol: one result per statement. */
  async function simple(text: string): Promise<Result[]> {
    return parse.parseResults(
      rethrow(await send(protocol.serialize.query(text))) as never,
      client.parsers,
    ) as Result[];
  }

  async function exchange(text: string, params: readonly unknown[], inTransaction: boolean): Promise<Row[]> {
    const name = params.length > 0 ? statementName(text) : undefined;
    const parts: Uint8Array[] = [];
    if (name === undefined || !prepared.has(name)) {
      if (name && prepared.size >= MAX_PREPARED && !inTransaction) {
        rethrow(await send(protocol.serialize.query('DEALLOCATE ALL')));
        prepared.clear();
      }
      parts.push(protocol.serialize.parse({ ...(name ? { name } : {}), text, types: [] }));
    }
    parts.push(
      protocol.serialize.bind({
        ...(name ? { statement: name } : {}),
        values: params.map(prepareValue) as never,
      }),
      protocol.serialize.describe({ type: 'P' }),
      protocol.serialize.execute({}),
      protocol.serialize.sync(),
    );
    const messages = await send(concat(parts));
    // A Parse that succeeded prepared the statement, even when a later step failed.
    if (name && messages.some((message) => message.name === 'parseComplete')) prepared.add(name);
    rethrow(messages);
    return parse.parseResults(messages as never, client.parsers)[0]?.rows ?? [];
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
