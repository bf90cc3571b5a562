const LEVELS: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

function fieldValue(value: unknown): string {
  if (typeof value === 'string') return /[\s"=]/.test(value) ? JSON.stringify(value) : value;
  return JSON.stringify(value);
}

/**
 * One pino JSON record as a line a person reads: `12:04:05 WARN  message key=value …`.
 * An error field shows its message (the stack stays in the JSON log file). Not JSON → as is.
 */
export function humanLine(json: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const { level, time, msg, ...fields } = record;
  const clock = new Date(typeof time === 'number' ? time : Date.now()).toTimeString().slice(0, 8);
  const label = (LEVELS[level as number] ?? String(level)).padEnd(5);
  const rest = Object.entries(fields).map(([key, value]) => {
    const error = value as { message?: unknown } | null;
    const shown =
      (key === 'err' || key === 'error') && error && typeof error === 'object' && 'message' in error
        ? fieldValue(error.message)
        : fieldValue(value);
    return `${key}=${shown}`;
  });
  return `${[clock, label, typeof msg === 'string' ? msg : '', ...rest].filter(Boolean).join(' ')}\n`;
}

/** A destination that writes each record to `target` as a human line (for a terminal). */
export function humanLines(target: NodeJS.WritableStream): { write(chunk: string): boolean } {
  return { write: (chunk: string) => target.write(humanLine(chunk.trimEnd())) };
}
