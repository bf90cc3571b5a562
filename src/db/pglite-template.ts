import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { constants, createZstdDecompress, zstdCompressSync, zstdDecompressSync } from 'node:zlib';

const BLOCK = 512;
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function versionOf(pkg: string): string {
  try {
    return (
      JSON.parse(readFileSync(path.join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as {
        version: string;
      }
    ).version;
  } catch {
    return 'unknown';
  }
}

/**
 * How build-template.ts makes a template; raised when that changes (2: dumped after a checkpoint;
 * 3: zstd instead of gzip).
 */
const TEMPLATE_FORMAT = 3;

/**
 * Changes whenever a migration file, a database package or the way a template is made changes, so
 * a stale template is never used.
 */
function templateKey(): string {
  const hash = createHash('sha256');
  hash.update(`format ${TEMPLATE_FORMAT}\n`);
  for (const pkg of ['@electric-sql/pglite', '@electric-sql/pglite-pgvector', 'pg-boss'])
    hash.update(`${pkg}@${versionOf(pkg)}\n`);
  const migrations = path.join(ROOT, 'migrations');
  for (const file of readdirSync(migrations).sort()) {
    hash.update(file);
    hash.update(readFileSync(path.join(migrations, file)));
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * A new PGlite cluster with the vector extension, every migration and the job queue's schema
 * applied, as a zstd-compressed tarball. PGlite runs initdb in WASM for every new data dir, which
 * takes seconds; unpacking this takes a tenth of one. Built by `npm install` (postinstall).
 */
export function templatePath(): string {
  return path.join(ROOT, 'node_modules', '.cache', 'steward', `pglite-template-${templateKey()}.tar.zst`);
}

/**
 * The template's tar compressed for templatePath(): zstd at its highest level short of the
 * "ultra" ones, 2.9 MB for 42 MB (gzip: 5.6 MB). Compressing takes ten seconds, once per install;
 * inflating is as quick at any level.
 */
export function compressTemplate(tar: Uint8Array): Buffer {
  return zstdCompressSync(tar, {
    pledgedSrcSize: tar.byteLength,
    params: { [constants.ZSTD_c_compressionLevel]: 19 },
  });
}

/**
 * Makes `dir` (missing or empty) a new cluster unpacked from the template, atomically: a crash
 * leaves either no cluster or a whole one. False when there is no template for this code or `dir`
 * holds files (the caller then lets PGlite load the tarball, or run initdb).
 */
export async function unpackTemplateInto(dir: string): Promise<boolean> {
  const file = templatePath();
  if (!existsSync(file)) return false;
  if (existsSync(dir) && readdirSync(dir).length > 0) return false;
  const partial = `${dir}.template-${process.pid}.tmp`;
  const writer = new TarWriter(partial);
  try {
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(partial, { recursive: true, mode: 0o700 });
    // Inflated piece by piece (on another thread), each piece written out as it arrives: no 42 MB
    // buffer (a streaming tar extractor took several times as long for the 1,300 small files as
    // these plain writes do).
    const inflate = createZstdDecompress({ chunkSize: INFLATE_CHUNK });
    inflate.end(readFileSync(file));
    for await (const chunk of inflate) writer.write(chunk as Buffer);
    writer.finish();
    if (existsSync(dir)) rmdirSync(dir);
    renameSync(partial, dir);
    return true;
  } catch {
    writer.abort();
    rmSync(partial, { recursive: true, force: true });
    return false;
  }
}

/**
 * Bytes zstd hands over at a time while unpacking: small enough to come from (and go back to) the
 * C heap, where one 42 MB buffer was mapped afresh (23.7k page faults for the unpack, 18.2k now).
 */
const INFLATE_CHUNK = 64 * 1024;

/**
 * Writes a ustar archive that arrives in pieces into `root`: each file opened once and its bytes
 * written as they arrive, each directory made once.
 */
class TarWriter {
  readonly #root: string;
  readonly #header = Buffer.alloc(BLOCK);
  #headerFilled = 0;
  /** The file being written (-1: an entry whose bytes are skipped), and its bytes still to come. */
  #fd = -1;
  #remaining = 0;
  /** Padding to the next block after the current entry's bytes. */
  #padding = 0;
  #ended = false;
  readonly #dirs = new Set<string>();

  constructor(root: string) {
    this.#root = root;
    this.#dirs.add(root);
  }

  write(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length && !this.#ended) {
      if (this.#remaining > 0) {
        const length = Math.min(this.#remaining, chunk.length - at);
        if (this.#fd >= 0) writeAll(this.#fd, chunk, at, length);
        at += length;
        this.#remaining -= length;
        if (this.#remaining === 0) this.#closeFile();
      } else if (this.#padding > 0) {
        const length = Math.min(this.#padding, chunk.length - at);
        at += length;
        this.#padding -= length;
      } else {
        const length = Math.min(BLOCK - this.#headerFilled, chunk.length - at);
        chunk.copy(this.#header, this.#headerFilled, at, at + length);
        at += length;
        this.#headerFilled += length;
        if (this.#headerFilled === BLOCK) {
          this.#headerFilled = 0;
          this.#entry(this.#header);
        }
      }
    }
  }

  /** Throws when the archive stopped inside an entry. */
  finish(): void {
    if (this.#remaining > 0 || this.#headerFilled > 0) throw new Error('truncated archive');
  }

  abort(): void {
    this.#closeFile();
  }

  #entry(block: Buffer): void {
    const header = ustarHeader(block);
    if (!header) {
      this.#ended = true; // the archive's end: a zero block
      return;
    }
    const relative = path.normalize(header.name.replace(/^\/+/, ''));
    if (relative.startsWith('..') || path.isAbsolute(relative))
      throw new Error(`unsafe entry ${header.name}`);
    const target = path.join(this.#root, relative);
    this.#remaining = header.size;
    this.#padding = Math.ceil(header.size / BLOCK) * BLOCK - header.size;
    if (header.type === 'directory') this.#mkdir(target);
    else if (header.type === 'file') {
      this.#mkdir(path.dirname(target));
      this.#fd = openSync(target, 'w', 0o600);
      if (header.size === 0) this.#closeFile();
    }
  }

  #mkdir(dir: string): void {
    if (this.#dirs.has(dir)) return;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.#dirs.add(dir);
  }

  #closeFile(): void {
    if (this.#fd >= 0) closeSync(this.#fd);
    this.#fd = -1;
  }
}

function writeAll(fd: number, bytes: Buffer, offset: number, length: number): void {
  while (length > 0) {
    const written = writeSync(fd, bytes, offset, length);
    offset += written;
    length -= written;
  }
}

/**
 * The fields Steward needs from one ustar header block of PGlite's own dumps (plain files and
 * directories, names within ustar's 255 bytes), or null for the end-of-archive block.
 */
function ustarHeader(
  block: Buffer,
): { name: string; size: number; type: 'file' | 'directory' | 'other' } | null {
  if (block.every((byte) => byte === 0)) return null;
  const text = (start: number, length: number) =>
    block.toString('utf8', start, start + length).replace(/\0.*$/s, '');
  if (text(257, 6) !== 'ustar') throw new Error('not a ustar archive');
  const prefix = text(345, 155);
  const name = `${prefix ? `${prefix}/` : ''}${text(0, 100)}`;
  const size = Number.parseInt(text(124, 12).trim() || '0', 8);
  const flag = text(156, 1);
  return { name, size, type: flag === '5' ? 'directory' : flag === '0' || flag === '' ? 'file' : 'other' };
}

/**
 * Bytes PGlite takes as a Blob (`loadDataDir`) and reads with `arrayBuffer()`, which for a Node
 * Blob copies them chunk by chunk into a growing buffer: a quarter of the 1.7 s CPU an in-memory
 * database took to open. This one hands over a fresh copy in one step (PGlite keeps views into
 * what it is given).
 */
class BytesBlob extends Blob {
  readonly #bytes: Uint8Array;

  constructor(bytes: Uint8Array) {
    super([]);
    this.#bytes = bytes;
  }

  override async arrayBuffer(): Promise<ArrayBuffer> {
    return this.#bytes.slice().buffer;
  }
}

let cached: Blob | null | undefined;

/**
 * The template, or null when it has not been built for this code (start-up is then just slower):
 * the tar inflated once per process, not once per database.
 */
export function pgliteTemplate(): Blob | null {
  if (cached !== undefined) return cached;
  const file = templatePath();
  cached = existsSync(file) ? new BytesBlob(zstdWhole(readFileSync(file))) : null;
  return cached;
}

/**
 * A zstd frame inflated into one buffer sized from its header (see gunzipWhole for why one
 * buffer): compressTemplate() records the tar's size there.
 */
function zstdWhole(compressed: Buffer): Buffer {
  const size = zstdContentSize(compressed);
  return zstdDecompressSync(compressed, size === null ? {} : { chunkSize: Math.max(64 * 1024, size + 1) });
}

/** The Frame_Content_Size of a zstd frame's header (RFC 8878 §3.1.1.1), or null when absent. */
function zstdContentSize(frame: Buffer): number | null {
  if (frame.length < 18 || frame.readUInt32LE(0) !== 0xfd2fb528) return null;
  const descriptor = frame[4]!;
  const sizeFlag = descriptor >> 6;
  const singleSegment = (descriptor >> 5) & 1;
  const at = 5 + (singleSegment ? 0 : 1) + [0, 1, 2, 4][descriptor & 3]!;
  switch (sizeFlag) {
    case 0:
      return singleSegment ? frame[at]! : null;
    case 1:
      return frame.readUInt16LE(at) + 256;
    case 2:
      return frame.readUInt32LE(at);
    default:
      return Number(frame.readBigUInt64LE(at));
  }
}

export function forgetPgliteTemplate(): void {
  cached = undefined;
}
