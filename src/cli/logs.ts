import { existsSync } from 'node:fs';
import type { ResolvedConfig } from '../config/index.ts';
import { followLog, logFilePath, logTail } from '../logging/index.ts';
import { CliExit, EXIT_ERROR, EXIT_OK, EXIT_USAGE } from './common.ts';

export type LogsOptions = { lines: string; follow?: boolean; json?: boolean };

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
  const tail = logTail(file, count);
  for (const line of tail.lines) print(line);
  if (!options.follow) throw new CliExit(EXIT_OK);
  await followLog(file, tail.size, print, signal);
  throw new CliExit(EXIT_OK);
}
