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
 * Parameterized queries on PGlite as one protocol exchange: Parse (once per statement text and
 * session, as node-postgres does with named statements), Bind, Describe, Execute, Sync.
 * `PGlite.query` makes six exchanges per query (it describes the statement to learn parameter
 * types first) and re-plans it every time: three times the CPU for a short query.
 */
export function pgliteQuery(client: PGlite) {
  const prepared = new Set<string>();

  async function exchange(text: string, params: readonly unknown[], inTransaction: boolean) {
    const name = params.length > 0 ? statementName(text) : undefined;
    const values = params.map(prepareValue) as never;
    // Whether the statement is prepared is decided under the lock: concurrent callers of one
    // statement must not both parse it.
    const run = async () => {
      const parts: Uint8Array[] = [];
      if (name === undefined || !prepared.has(name)) {
        if (name && prepared.size >= MAX_PREPARED && !inTransaction) {
          await client.execProtocol(protocol.serialize.query('DEALLOCATE ALL'), { syncToFs: false });
          prepared.clear();
        }
        parts.push(protocol.serialize.parse({ ...(name ? { name } : {}), text, types: [] }));
      }
      parts.push(
        protocol.serialize.bind({ ...(name ? { statement: name } : {}), values }),
        protocol.serialize.describe({ type: 'P' }),
        protocol.serialize.execute({}),
        protocol.serialize.sync(),
      );
      const { messages } = await client.execProtocol(concat(parts), {
        // Steward opens PGlite on the node file system or in memory, whose syncToFs does
        // nothing (PostgreSQL writes through to the files itself): asking costs a lock round.
        syncToFs: false,
        throwOnError: false,
      });
      if (name && (messages as Message[]).some((message) => message.name === 'parseComplete'))
        prepared.add(name);
      return messages;
    };
    // Outside a transaction, wait for any transaction in progress, as PGlite.query does.
    const messages = inTransaction
      ? await client.runExclusive(run)
      : await client._runExclusiveTransaction(() => client.runExclusive(run));
    const error = (messages as Message[]).find((message) => message.name === 'error');
    if (error) throw error;
    return parse.parseResults(messages, client.parsers)[0]?.rows ?? [];
  }

  return async <T extends Row>(
    text: string,
    params: readonly unknown[] = [],
    options: { inTransaction: boolean } = { inTransaction: false },
  ): Promise<T[]> => {
    try {
      return (await exchange(text, params, options.inTransaction)) as T[];
    } catch (error) {
      // Something dropped the session's statements (DEALLOCATE, DISCARD): prepare them again.
      if ((error as { code?: string }).code !== UNDEFINED_PREPARED_STATEMENT || options.inTransaction)
        throw error;
      prepared.clear();
      return (await exchange(text, params, false)) as T[];
    }
  };
}
