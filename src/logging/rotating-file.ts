import { closeSync, fstatSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import path from 'node:path';

export type RotatingFileOptions = {
  /** The live file; older ones are `<file>.1` (newest) … `<file>.<maxFiles - 1>`. */
  file: string;
  maxBytes: number;
  /** Files kept, the live one included; the oldest is discarded on rotation. */
  maxFiles: number;
};

/**
 * A pino destination appending JSON lines to a file, rotated by size. Writes are synchronous
 * (log volume is low and a crash must not lose the lines that explain it). A failing disk
 * never throws into the caller: the line is dropped and reported once on stderr.
 */
export class RotatingFile {
  readonly #options: RotatingFileOptions;
  #fd: number | null = null;
  #size = 0;
  #failed = false;

  constructor(options: RotatingFileOptions) {
    this.#options = options;
  }

  write(line: string): boolean {
    try {
      if (this.#fd === null) this.#open();
      const bytes = Buffer.byteLength(line);
      if (this.#size > 0 && this.#size + bytes > this.#options.maxBytes) this.#rotate();
      writeSync(this.#fd!, line);
      this.#size += bytes;
      this.#failed = false;
    } catch (error) {
      if (!this.#failed)
        process.stderr.write(`steward: cannot write ${this.#options.file}: ${(error as Error).message}\n`);
      this.#failed = true;
    }
    return true;
  }

  close(): void {
    if (this.#fd !== null) closeSync(this.#fd);
    this.#fd = null;
  }

  #open(): void {
    mkdirSync(path.dirname(this.#options.file), { recursive: true });
    this.#fd = openSync(this.#options.file, 'a');
    this.#size = fstatSync(this.#fd).size;
  }

  #rotate(): void {
    this.close();
    const { file, maxFiles } = this.#options;
    for (let index = maxFiles - 1; index >= 1; index--) {
      const from = index === 1 ? file : `${file}.${index - 1}`;
      try {
        renameSync(from, `${file}.${index}`);
      } catch {
        // Not there yet: fewer files than the limit.
      }
    }
    this.#open();
  }
}

/** The log file of a data dir (what `steward logs` reads). */
export function logFilePath(dataDir: string): string {
  return path.join(dataDir, 'logs', 'steward.log');
}
