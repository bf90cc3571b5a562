import { protocol, types } from '@electric-sql/pglite';

/*
 * One exchange with PostgreSQL on its wire protocol, written and read here: the statement's
 * messages, and its answer read straight from its bytes. PGlite's own reader makes an object
 * per protocol message through private-field accessors, copies every field's bytes before
 * decoding them, and builds each row again from those messages; its writer goes through the
 * same accessors. Together about half the CPU of a short statement. This reads the few
 * messages a query's answer holds and parses values with the client's own type parsers, so
 * rows come out as PGlite makes them.
 */

type Row = Record<string, unknown>;
type Parser = (text: string, typeId: number) => unknown;
type Field = { name: string; dataTypeID: number };

/** One statement's rows. */
export type WireResult = { rows: Row[] };

export type WireAnswer = {
  results: WireResult[];
  /** The first error PostgreSQL reported (as PGlite reports it), or null. */
  error: InstanceType<typeof protocol.messages.DatabaseError> | null;
  /** Whether a Parse succeeded (the statement is prepared even when a later step failed). */
  parsed: boolean;
};

/** The error fields by their protocol code, under PGlite's `DatabaseError` property names. */
const ERROR_FIELDS: Readonly<Record<string, string>> = {
  S: 'severity',
  C: 'code',
  D: 'detail',
  H: 'hint',
  P: 'position',
  p: 'internalPosition',
  q: 'internalQuery',
  W: 'where',
  s: 'schema',
  t: 'table',
  c: 'column',
  d: 'dataType',
  n: 'constraint',
  F: 'file',
  L: 'line',
  R: 'routine',
};

/** Reads one exchange's answer (`bytes`, whole messages) with `parsers` by type id. */
export function readAnswer(bytes: Uint8Array, parsers: Readonly<Record<number, Parser>>): WireAnswer {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const results: WireResult[] = [];
  let error: WireAnswer['error'] = null;
  let parsed = false;
  let fields: Field[] = [];
  let columnParsers: Array<Parser | undefined> = [];
  let rows: Row[] = [];
  let at = 0;
  const cstring = (from: number): [string, number] => {
    const end = buffer.indexOf(0, from);
    return [buffer.toString('utf8', from, end), end + 1];
  };
  while (at + 5 <= buffer.length) {
    const type = buffer[at]!;
    const end = at + 1 + buffer.readInt32BE(at + 1);
    let pos = at + 5;
    switch (type) {
      case 0x31: // ParseComplete
        parsed = true;
        break;
      case 0x54: {
        // RowDescription
        const count = buffer.readInt16BE(pos);
        pos += 2;
        fields = new Array(count);
        columnParsers = new Array(count);
        for (let index = 0; index < count; index++) {
          const [name, next] = cstring(pos);
          const dataTypeID = buffer.readInt32BE(next + 6);
          fields[index] = { name, dataTypeID };
          columnParsers[index] = parsers[dataTypeID] ?? (types.parsers as Record<number, Parser>)[dataTypeID];
          pos = next + 18;
        }
        break;
      }
      case 0x44: {
        // DataRow
        const count = buffer.readInt16BE(pos);
        pos += 2;
        const row: Row = {};
        for (let index = 0; index < count; index++) {
          const length = buffer.readInt32BE(pos);
          pos += 4;
          let value: unknown = null;
          if (length >= 0) {
            const text = buffer.toString('utf8', pos, pos + length);
            const parse = columnParsers[index];
            value = parse ? parse(text, fields[index]!.dataTypeID) : text;
            pos += length;
          }
          row[fields[index]!.name] = value;
        }
        rows.push(row);
        break;
      }
      case 0x43: // CommandComplete: the statement's rows are all here.
        results.push({ rows });
        rows = [];
        fields = [];
        break;
      case 0x45: {
        // ErrorResponse: the first one is the answer's error.
        if (error) break;
        const found: Record<string, string> = {};
        while (buffer[pos] !== 0) {
          const code = String.fromCharCode(buffer[pos]!);
          const [value, next] = cstring(pos + 1);
          found[code] = value;
          pos = next;
        }
        error = new protocol.messages.DatabaseError(found.M ?? 'unknown error', end - at - 1, 'error');
        for (const [code, property] of Object.entries(ERROR_FIELDS))
          (error as unknown as Record<string, string | undefined>)[property] = found[code];
        break;
      }
      // The rest (BindComplete, NoData, ReadyForQuery, notices, parameter status) say nothing a
      // query's result needs.
    }
    at = end;
  }
  if (results.length === 0) results.push({ rows: [] });
  return { results, error, parsed };
}

/** A protocol message: its type byte, its length, its body. */
function message(type: number, body: Buffer): Buffer {
  const out = Buffer.allocUnsafe(5 + body.length);
  out[0] = type;
  out.writeInt32BE(4 + body.length, 1);
  body.copy(out, 5);
  return out;
}

const cstring = (text: string) => Buffer.from(`${text}\0`, 'utf8');
const int16 = (value: number) => {
  const out = Buffer.allocUnsafe(2);
  out.writeInt16BE(value);
  return out;
};

/** Multi-statement SQL on the simple protocol (a Query message). */
export const queryMessage = (text: string): Uint8Array => message(0x51, cstring(text));

/** Describe the unnamed portal, Execute it with no row limit, Sync. */
const DESCRIBE_EXECUTE_SYNC = Buffer.concat([
  message(0x44, Buffer.from('P\0', 'latin1')),
  message(0x45, Buffer.from([0, 0, 0, 0, 0])),
  message(0x53, Buffer.alloc(0)),
]);

/**
 * A parameterized statement as one exchange: Parse (when `parse`; `name` '' is the unnamed
 * statement), Bind of `values` (text, `null`, or bytes sent in binary), Describe, Execute, Sync.
 */
export function statementMessages(
  text: string,
  name: string,
  values: ReadonlyArray<string | Uint8Array | null>,
  parse: boolean,
): Uint8Array {
  const parts: Buffer[] = [];
  if (parse) parts.push(message(0x50, Buffer.concat([cstring(name), cstring(text), int16(0)])));
  const bind: Uint8Array[] = [cstring(''), cstring(name), int16(values.length)];
  for (const value of values) bind.push(int16(value instanceof Uint8Array ? 1 : 0));
  bind.push(int16(values.length));
  for (const value of values) {
    const bytes = value === null ? null : value instanceof Uint8Array ? value : Buffer.from(value, 'utf8');
    const length = Buffer.allocUnsafe(4);
    length.writeInt32BE(bytes === null ? -1 : bytes.length);
    bind.push(length);
    if (bytes) bind.push(bytes);
  }
  bind.push(int16(0));
  parts.push(message(0x42, Buffer.concat(bind)), DESCRIBE_EXECUTE_SYNC);
  return Buffer.concat(parts);
}
