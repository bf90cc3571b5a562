import { type Logger, pino } from 'pino';

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
      message: redactString(value.message, secrets),
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
};

/** A pino logger whose every record passes through `redact` before it is written. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const secrets = options.secrets ?? (() => []);
  return pino(
    {
      level: options.level ?? 'info',
      base: undefined,
      formatters: {
        log: (object) => redact(object, secrets()) as Record<string, unknown>,
      },
      hooks: {
        logMethod(args, method) {
          const cleaned = args.map((arg) => (typeof arg === 'string' ? redactString(arg, secrets()) : arg));
          return method.apply(this, cleaned as Parameters<typeof method>);
        },
      },
    },
    (options.destination ?? process.stderr) as pino.DestinationStream,
  );
}

/** A logger that writes nothing, for tests and library defaults. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
