import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import type { ResolvedConfig } from '../config/index.ts';
import { logFilePath } from '../logging/index.ts';
import { CliExit, EXIT_ERROR, EXIT_OK, EXIT_USAGE } from './common.ts';

export type LogsOptions = { lines: string; follow?: boolean; json?: boolean };

const POLL_MS = 250;

/**
 * `steward logs`: the last lines of the server's log (`<data dir>/logs/steward.log`),
 * pretty-printed (or raw JSON), and with `--follow` every new line as it is written.
 */
export async function logsCommand(
  config: ResolvedConfig,
  options: LogsOptions,
  signal: AbortSignal = new AbortController().signal,
): Promise<void> {
  const count = Number(options.lines);
  if (!Number.isInteger(count) || count < 0) {
    throw new CliExit(EXIT_USAGE, `steward logs: --lines must be a whole number, got "${options.lines}"`);
  }
  const file = logFilePath(config.dataDir);
  if (!existsSync(file) && !options.follow) {
    throw new CliExit(
      EXIT_ERROR,
      `steward logs: no log file at ${file}. \`steward start\` writes it (logs.file: true, the default).`,
    );
  }
  // Loaded here only: every other command would pay for it at start-up.
  const pretty = options.json
    ? null
    : (await import('pino-pretty')).prettyFactory({
        colorize: process.stdout.isTTY,
        translateTime: 'SYS:standard',
      });
  const print = (line: string) => {
    if (!line.trim()) return;
    if (!pretty) {
      process.stdout.write(`${line}\n`);
      return;
    }
    try {
      process.stdout.write(pretty(JSON.parse(line)));
    } catch {
      process.stdout.write(`${line}\n`);
    }
  };
  const previous = `${file}.1`;
  const text = [
    existsSync(previous) ? readFileSync(previous, 'utf8') : '',
    existsSync(file) ? readFileSync(file, 'utf8') : '',
  ]
    .join('')
    .split('\n')
    .filter((line) => line.trim());
  for (const line of count === 0 ? [] : text.slice(-count)) print(line);
  if (!options.follow) throw new CliExit(EXIT_OK);
  await follow(file, existsSync(file) ? statSync(file).size : 0, print, signal);
  throw new CliExit(EXIT_OK);
}

/** Prints lines appended to `file` from `offset` on; starts over when the file was rotated. */
async function follow(file: string, offset: number, print: (line: string) => void, signal: AbortSignal) {
  let position = offset;
  let partial = '';
  while (!signal.aborted) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    if (!existsSync(file)) continue;
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
    for (const line of lines) print(line);
  }
}
