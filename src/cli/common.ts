import { readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { ConfigStore, loadConfig, type ResolvedConfig } from '../config/index.ts';
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

const OWN_BIN = new URL('../../bin/steward.js', import.meta.url).pathname;

/**
 * How to run Steward from a shell, for messages that tell people what to type: `steward` when
 * that command on the PATH is this installation (npm link, a global install), else `npx steward`
 * (what works in the project folder after npm install).
 */
export function stewardInvocation(env: NodeJS.ProcessEnv = process.env): string {
  let own: string;
  try {
    own = realpathSync(OWN_BIN);
  } catch {
    return 'npx steward';
  }
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    try {
      if (realpathSync(path.join(dir, 'steward')) === own) return 'steward';
    } catch {
      // no steward there
    }
  }
  return 'npx steward';
}

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
