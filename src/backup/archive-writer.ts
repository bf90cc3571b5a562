import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { open } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { lazyModule } from '../integrations/index.ts';

/** tar-stream, loaded by the first backup rather than by every start. */
const tarStream = lazyModule<typeof import('tar-stream')>('tar-stream');

/** The last entry of every archive: `sha256sum -c` format, one line per entry before it. */
export const CHECKSUMS_ENTRY = 'SHA256SUMS';

/**
 * Writes a gzipped tar entry by entry, hashing each entry's bytes as they go in, and ends with
 * SHA256SUMS. Entries are written one at a time: callers await each.
 */
export class ArchiveWriter {
  readonly #pack = tarStream().pack();
  readonly #done: Promise<void>;
  readonly #sums = new Map<string, string>();
  #bytes = 0;

  constructor(output: Writable) {
    this.#done = pipeline(this.#pack, createGzip({ level: 6 }), output);
    // A failed output fails the pending entry through #done; keep it from being unhandled meanwhile.
    this.#done.catch(() => undefined);
  }

  /** sha256 of every entry written so far, by name. */
  get checksums(): ReadonlyMap<string, string> {
    return this.#sums;
  }

  get bytes(): number {
    return this.#bytes;
  }

  async addBuffer(
    name: string,
    content: Buffer,
    options: { mtime?: Date; mode?: number } = {},
  ): Promise<void> {
    await this.#entry(name, content.length, options, async (entry) => {
      entry.end(content);
      return createHash('sha256').update(content).digest('hex');
    });
  }

  /**
   * Adds the file at `absolute` as it is when opened: exactly the bytes its size says (a file
   * replaced by a rename meanwhile is read whole from the open descriptor). Never follows a
   * symbolic link: the caller passes regular files only, and one that became a link is refused.
   */
  async addFile(name: string, absolute: string): Promise<void> {
    const handle = await open(absolute, 'r');
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw new Error(`${absolute} is no longer a regular file`);
      await this.#entry(name, info.size, { mtime: info.mtime, mode: info.mode & 0o777 }, async (entry) => {
        const hash = createHash('sha256');
        const stream = handle.createReadStream({
          start: 0,
          end: Math.max(0, info.size - 1),
          autoClose: false,
        });
        let read = 0;
        if (info.size > 0) {
          for await (const chunk of stream as AsyncIterable<Buffer>) {
            const part = read + chunk.length > info.size ? chunk.subarray(0, info.size - read) : chunk;
            read += part.length;
            hash.update(part);
            if (!entry.write(part)) await once(entry, 'drain');
          }
        }
        if (read !== info.size) throw new Error(`${absolute} shrank while it was read`);
        entry.end();
        return hash.digest('hex');
      });
    } finally {
      await handle.close();
    }
  }

  /** Adds SHA256SUMS and closes the archive; resolves once the output has it all. */
  async finish(): Promise<void> {
    const lines = [...this.#sums].map(([name, sum]) => `${sum}  ${name}\n`).join('');
    await this.addBuffer(CHECKSUMS_ENTRY, Buffer.from(lines));
    this.#pack.finalize();
    await this.#done;
  }

  /** Stops writing: the output is left incomplete (the caller removes it). */
  abort(error: Error): void {
    this.#pack.destroy(error);
  }

  async #entry(
    name: string,
    size: number,
    options: { mtime?: Date; mode?: number },
    write: (entry: Writable) => Promise<string>,
  ): Promise<void> {
    let written!: () => void;
    let failed!: (error: Error) => void;
    const finished = new Promise<void>((resolve, reject) => {
      written = resolve;
      failed = reject;
    });
    const entry = this.#pack.entry(
      { name, size, type: 'file', mode: options.mode ?? 0o600, mtime: options.mtime ?? new Date() },
      (error) => (error ? failed(error) : written()),
    );
    const sum = await write(entry);
    await Promise.race([finished, this.#done.then(() => finished)]);
    this.#sums.set(name, sum);
    this.#bytes += size;
  }
}
