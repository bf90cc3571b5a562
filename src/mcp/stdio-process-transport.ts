import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import type { ReadBuffer } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export type StdioProcessOptions = {
  command: string;
  args?: readonly string[];
  /** The child's whole environment: nothing of Steward's own is added. */
  env: Record<string, string>;
  cwd?: string;
};

const STDERR_TAIL = 2_000;

/**
 * An MCP stdio client transport that spawns the server with exactly `env`. The SDK's own
 * transport merges a default set of Steward's variables in; a server must see only what its
 * entry grants (plus PATH and HOME, which the caller adds). Keeps the tail of the child's
 * stderr so a failure can say why.
 */
export class StdioProcessTransport implements Transport {
  readonly #options: StdioProcessOptions;
  #stdio: typeof import('@modelcontextprotocol/sdk/shared/stdio.js') | null = null;
  #buffer: ReadBuffer | null = null;
  #child: ChildProcessWithoutNullStreams | null = null;
  #stderr = '';
  #exit: string | null = null;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  constructor(options: StdioProcessOptions) {
    this.#options = options;
  }

  /** The last lines the server wrote to stderr, and how it exited, for error messages. */
  diagnosis(): string {
    const tail = this.#stderr.trim().split('\n').slice(-3).join(' | ');
    return [this.#exit, tail ? `stderr: ${tail}` : null].filter(Boolean).join('; ');
  }

  async start(): Promise<void> {
    if (this.#child) throw new Error('the MCP server process is already started');
    this.#stdio = await import('@modelcontextprotocol/sdk/shared/stdio.js');
    this.#buffer = new this.#stdio.ReadBuffer();
    const buffer = this.#buffer;
    return new Promise((resolve, reject) => {
      const child = spawn(this.#options.command, [...(this.#options.args ?? [])], {
        env: this.#options.env,
        cwd: this.#options.cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
      });
      this.#child = child;
      child.once('error', (error) => {
        this.#exit = `could not start ${this.#options.command}: ${error.message}`;
        reject(error);
        this.onerror?.(error);
      });
      child.once('spawn', () => resolve());
      child.once('close', (code, signal) => {
        this.#exit ??= signal
          ? `the process was stopped by ${signal}`
          : `the process exited with code ${code}`;
        this.#child = null;
        this.onclose?.();
      });
      child.stdout.on('data', (chunk: Buffer) => {
        try {
          buffer.append(chunk);
        } catch (error) {
          this.onerror?.(error as Error);
          void this.close();
          return;
        }
        for (;;) {
          let message: JSONRPCMessage | null;
          try {
            message = buffer.readMessage();
          } catch (error) {
            this.onerror?.(error as Error);
            continue;
          }
          if (message === null) break;
          this.onmessage?.(message);
        }
      });
      child.stderr.on('data', (chunk: Buffer) => {
        this.#stderr = (this.#stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
      });
      child.stdin.on('error', (error) => this.onerror?.(error));
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const child = this.#child;
    if (!child) return Promise.reject(new Error(`the MCP server is not running (${this.diagnosis()})`));
    return new Promise((resolve) => {
      if (child.stdin.write(this.#stdio!.serializeMessage(message))) resolve();
      else child.stdin.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    const child = this.#child;
    if (!child) return;
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    child.stdin.end();
    const kill = setTimeout(() => child.kill('SIGTERM'), 2_000);
    const force = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await closed;
    clearTimeout(kill);
    clearTimeout(force);
    this.#buffer?.clear();
  }
}
