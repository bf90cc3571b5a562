import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { ConfigStore, loadConfig, type ResolvedConfig, stewardCommand } from '../config/index.ts';
import { ConfigError, errorMessage, StewardError } from '../errors.ts';
import { createLogger, type Logger } from '../logging/index.ts';

export const EXIT_OK = 0;
export const EXIT_ERROR = 1;
export const EXIT_USAGE = 2;

/** Thrown by a command to end the process with `code` after printing `message` (one line). */
export class CliExit extends Error {
  readonly exitCode: number;
  constructor(exitCode: number, message = '') {
    super(message);
    this.exitCode = exitCode;
  }
}

/** Loads the configuration or ends the process with exit code 2 and one line naming the key. */
export function loadConfigOrExit(): ResolvedConfig {
  readDotEnv();
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError)
      throw new CliExit(EXIT_USAGE, `steward: invalid configuration: ${error.message}`);
    throw error;
  }
}

export function configStore(config: ResolvedConfig): ConfigStore {
  return new ConfigStore(config);
}

export function cliLogger(config: ResolvedConfig, level?: string): Logger {
  return createLogger({ level: level ?? config.log_level, secrets: () => config.secrets });
}

/** How to run Steward from a shell (`steward` when it is on the PATH, else `npx steward`). */
export const stewardInvocation = stewardCommand;

/** One line for the terminal: the error's message, never a stack trace. */
export function describeFailure(error: unknown): string {
  if (error instanceof StewardError) return error.message;
  return errorMessage(error);
}

/**
 * Reads `.env` in the working directory into `env`, the way most tools do: a variable already
 * set in the real environment wins. A missing file is fine.
 */
export function readDotEnv(cwd = process.cwd(), env: NodeJS.ProcessEnv = process.env): void {
  let text: string;
  try {
    text = readFileSync(path.join(cwd, '.env'), 'utf8');
  } catch {
    return;
  }
  for (const [name, value] of Object.entries(parseEnv(text))) {
    if (env[name] === undefined) env[name] = value;
  }
}
