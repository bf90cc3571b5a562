import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CliExit } from '../../src/cli/common.ts';
import { removeAfterFile, tempDir } from './temp.ts';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const MAIN = fileURLToPath(new URL('../../bin/steward.js', import.meta.url));
/** The flags every launcher (npm start, bin/steward.js, the Dockerfile) runs Steward with. */
export const NODE_FLAGS = [
  '--liftoff-only',
  '--max-semi-space-size=1',
  '--heap-growing-percent=20',
  '--no-maglev',
  '--no-sparkplug',
];

/** A new directory holding `steward.yaml` (`yaml`) and a data dir, and the environment that points `steward` at them (removed after the test file). */
export function cliConfig(prefix: string, yaml: string): { env: Record<string, string>; dataDir: string } {
  const dir = tempDir(prefix);
  const dataDir = path.join(dir, 'data');
  writeFileSync(path.join(dir, 'steward.yaml'), yaml);
  return { env: { STEWARD_CONFIG: path.join(dir, 'steward.yaml'), STEWARD_DATA_DIR: dataDir }, dataDir };
}

export type CliResult = { code: number | null; stdout: string; stderr: string };

/**
 * Runs `steward ARGS` in a child process with only the given environment (plus PATH/HOME). Its
 * data dir, when in the system's temp dir, is removed after the test file.
 */
export function runCli(
  args: string[],
  options: { env?: Record<string, string>; cwd?: string; input?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  removeAfterFile(options.env?.STEWARD_DATA_DIR);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...NODE_FLAGS, MAIN, ...args], {
      cwd: options.cwd ?? ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...options.env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

/**
 * How a `steward` command refuses, run in this process through the function its process runs:
 * the exit code and the one line the process would print to stderr. For refusals beyond one
 * that a test has seen a real process print.
 */
export async function refusal(command: Promise<unknown>): Promise<CliResult> {
  try {
    await command;
  } catch (error) {
    if (error instanceof CliExit) return { code: error.exitCode, stdout: '', stderr: `${error.message}\n` };
    throw error;
  }
  throw new Error('the command did not refuse');
}

/** Starts `steward start` and resolves once /readyz answers 200 (its data dir removed as runCli's is). */
export async function startServer(options: {
  env: Record<string, string>;
  cwd?: string;
  /** How long to wait for /readyz (default 90 s). */
  readyTimeoutMs?: number;
}): Promise<{
  child: ChildProcess;
  port: number;
  url: string;
  output: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}> {
  removeAfterFile(options.env.STEWARD_DATA_DIR);
  const port = Number(options.env.PORT);
  const child = spawn(process.execPath, [...NODE_FLAGS, MAIN, 'start'], {
    cwd: options.cwd ?? ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...options.env },
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (options.readyTimeoutMs ?? 90_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`steward start exited ${child.exitCode}: ${output}`);
    try {
      const response = await fetch(`${url}/readyz`);
      if (response.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`steward start did not become ready: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    child,
    port,
    url,
    output: () => output,
    stop: (signal = 'SIGTERM') =>
      new Promise((resolve) => {
        // A process killed by a signal has no exit code, only a signal code.
        if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
        child.once('exit', (code) => resolve(code));
        child.kill(signal);
      }),
  };
}

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}
