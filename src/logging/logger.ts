import { type Logger, pino } from 'pino';
import { errorMessage } from '../errors.ts';
import { humanLines } from './human-lines.ts';
import { currentLogFields } from './log-context.ts';
import { RotatingFile, type RotatingFileOptions } from './rotating-file.ts';

export type { Logger } from 'pino';

/** Keys whose values are secrets wherever they appear in a logged object. */
const SECRET_KEY_PATTERN = /(api[_-]?key|token|secret|password|authorization|cookie|credential)/i;
const REDACTED = '[redacted]';

/**
 * Replaces every secret value inside `value` (strings, error messages, nested objects).
 * `secrets` are the literal configured secret values; keys that look secret are masked too.
 */
export function redact(value: unknown, secrets: readonly string[], depth = 0): unknown {
  if (depth > 8) return value;
  if (typeof value === 'string') return redactString(value, secrets);
  if (value instanceof Error) {
    const out: Record<string, unknown> = {
      type: value.name,
      message: redactString(errorMessage(value), secrets),
      stack: value.stack ? redactString(value.stack, secrets) : undefined,
    };
    const code = (value as { code?: unknown }).code;
    if (code !== undefined) out.code = code;
    if (value.cause !== undefined) out.cause = redact(value.cause, secrets, depth + 1);
    return out;
  }
  if (Array.isArray(value)) return value.map((item) => redact(item, secrets, depth + 1));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      out[key] =
        SECRET_KEY_PATTERN.test(key) && typeof inner === 'string' && inner.length > 0
          ? REDACTED
          : redact(inner, secrets, depth + 1);
    }
    return out;
  }
  return value;
}

const BEARER_PATTERN = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/g;

export function redactString(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= 4 && out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  return out.replace(BEARER_PATTERN, `$1 ${REDACTED}`);
}

export type LoggerOptions = {
  level?: string;
  /** Literal secret values to mask wherever they appear. Read on every log call. */
  secrets?: () => readonly string[];
  destination?: NodeJS.WritableStream;
  /** Also append every line to this rotated file (`steward start` writes `<data dir>/logs/steward.log`). */
  file?: RotatingFileOptions;
};

/**
 * A pino logger whose every record passes through `redact` before it is written, and carries
 * the turn, agent and skill ids of the async context it was written in (`withLogContext`).
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const secrets = options.secrets ?? (() => []);
  // A person at a terminal reads lines; anything else (a pipe, a file, a collector) gets JSON.
  // The rotated log file is always JSON (`steward logs` pretty-prints it).
  const primary = (options.destination ??
    (process.stderr.isTTY ? humanLines(process.stderr) : process.stderr)) as pino.DestinationStream;
  // Each stream passes everything; the logger's own (hot-reloadable) level filters.
  const destination = options.file
    ? pino.multistream([
        { stream: primary, level: 'trace' },
        { stream: new RotatingFile(options.file), level: 'trace' },
      ])
    : primary;
  return pino(
    {
      level: options.level ?? 'info',
      base: undefined,
      mixin: () => currentLogFields(),
      formatters: {
        log: (object) => redact(object, secrets()) as Record<string, unknown>,
      },
      // A child logger's fields are serialized once, when it is made, past every formatter.
      onChild: (child) => {
        const fields = child as unknown as Record<symbol, unknown>;
        const serialized = fields[CHILD_FIELDS];
        if (typeof serialized === 'string') fields[CHILD_FIELDS] = redactString(serialized, secrets());
      },
      hooks: {
        logMethod(args, method) {
          // The first object goes through formatters.log; later ones are interpolated (%o, %j) as they are.
          const cleaned = args.map((arg, index) =>
            typeof arg === 'string' ? redactString(arg, secrets()) : index > 0 ? redact(arg, secrets()) : arg,
          );
          // A lone Error becomes the line's message unredacted in pino: give it a redacted one.
          if (cleaned.length === 1 && cleaned[0] instanceof Error)
            cleaned.push(redactString(cleaned[0].message, secrets()));
          return method.apply(this, cleaned as Parameters<typeof method>);
        },
      },
    },
    destination,
  );
}

const CHILD_FIELDS: symbol = pino.symbols.chindingsSym;

/** A logger that writes nothing, for tests and library defaults. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
