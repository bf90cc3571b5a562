import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';

/*
 * Reading the server's log file (`<data dir>/logs/steward.log`, rotated to `.1`) from the
 * outside: its last lines, and every line appended after a point. `steward logs` and the
 * dashboard's Logs page read it the same way.
 */

const POLL_MS = 250;

/** The last `count` non-empty lines of the log and its previous file, and the live file's size (where to follow from). */
export function logTail(file: string, count: number): { lines: string[]; size: number } {
  const previous = `${file}.1`;
  const text = [
    existsSync(previous) ? readFileSync(previous, 'utf8') : '',
    existsSync(file) ? readFileSync(file, 'utf8') : '',
  ]
    .join('')
    .split('\n')
    .filter((line) => line.trim());
  return { lines: count === 0 ? [] : text.slice(-count), size: existsSync(file) ? statSync(file).size : 0 };
}

/**
 * Calls `onLine` with each complete line appended to `file` after `offset` until `signal`
 * aborts, polling every 250 ms; starts over from the top when the file was rotated.
 */
export async function followLog(
  file: string,
  offset: number,
  onLine: (line: string) => void,
  signal: AbortSignal,
): Promise<void> {
  let position = offset;
  let partial = '';
  while (!signal.aborted) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    if (signal.aborted || !existsSync(file)) continue;
    const size = statSync(file).size;
    if (size < position) position = 0; // rotated: the live file is a new one
    if (size === position) continue;
    const buffer = Buffer.alloc(size - position);
    const fd = openSync(file, 'r');
    try {
      readSync(fd, buffer, 0, buffer.length, position);
    } finally {
      closeSync(fd);
    }
    position = size;
    const lines = (partial + buffer.toString('utf8')).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) if (line.trim()) onLine(line);
  }
}

/** pino's level names by number. */
export const LOG_LEVELS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 } as const;
export type LogLevelName = keyof typeof LOG_LEVELS;

/** One line of the log, read: a JSON record's time, level, message and other fields; any other line as its text. */
export type LogEntry = {
  time: string | null;
  level: LogLevelName | null;
  levelValue: number;
  msg: string;
  fields: string;
};

export function parseLogLine(line: string): LogEntry {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
    if (!record || typeof record !== 'object' || Array.isArray(record)) throw new Error('not a record');
  } catch {
    return { time: null, level: null, levelValue: 0, msg: line, fields: '' };
  }
  const { level, time, msg, pid: _pid, hostname: _hostname, ...rest } = record;
  const levelValue = typeof level === 'number' ? level : 0;
  const name = (Object.entries(LOG_LEVELS).find(([, value]) => value === levelValue)?.[0] ??
    null) as LogLevelName | null;
  const fields = Object.entries(rest)
    .map(([key, value]) => {
      const error = value as { message?: unknown } | null;
      const shown =
        (key === 'err' || key === 'error') && error && typeof error === 'object' && 'message' in error
          ? error.message
          : value;
      return `${key}=${typeof shown === 'string' ? shown : JSON.stringify(shown)}`;
    })
    .join(' ');
  return {
    time: typeof time === 'number' ? new Date(time).toISOString() : null,
    level: name,
    levelValue,
    msg: typeof msg === 'string' ? msg : '',
    fields,
  };
}
