import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipWhole } from './gunzip-whole.ts';

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

/** How build-template.ts makes a template; raised when that changes (2: dumped after a checkpoint). */
const TEMPLATE_FORMAT = 2;

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
 * applied, as a tarball. PGlite runs initdb in WASM for every new data dir, which takes
 * seconds; unpacking this takes about one. Built by `npm install` (postinstall).
 */
export function templatePath(): string {
  return path.join(ROOT, 'node_modules', '.cache', 'steward', `pglite-template-${templateKey()}.tar.gz`);
}

/**
 * Makes `dir` (missing or empty) a new cluster unpacked from the template tarball, atomically:
 * a crash leaves either no cluster or a whole one. False when there is no template for this
 * code or `dir` holds files (the caller then lets PGlite load the tarball, or run initdb).
 * Unpacking here writes each file once; PGlite's own loader takes about a second.
 */
export function unpackTemplateInto(dir: string): boolean {
  const file = templatePath();
  if (!existsSync(file)) return false;
  if (existsSync(dir) && readdirSync(dir).length > 0) return false;
  const partial = `${dir}.template-${process.pid}.tmp`;
  try {
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(partial, { recursive: true, mode: 0o700 });
    // One synchronous pass over the whole archive (42 MB unpacked): a streaming tar extractor
    // took several times as long for its 1,300 small files.
    const archive = gunzipWhole(readFileSync(file));
    for (let offset = 0; offset + BLOCK <= archive.length; ) {
      const header = ustarHeader(archive.subarray(offset, offset + BLOCK));
      offset += BLOCK;
      if (!header) break; // the archive's end: a zero block
      const relative = path.normalize(header.name.replace(/^\/+/, ''));
      if (relative.startsWith('..') || path.isAbsolute(relative))
        throw new Error(`unsafe entry ${header.name}`);
      const target = path.join(partial, relative);
      if (header.type === 'directory') mkdirSync(target, { recursive: true, mode: 0o700 });
      else if (header.type === 'file') {
        mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
        writeFileSync(target, archive.subarray(offset, offset + header.size), { mode: 0o600 });
      }
      offset += Math.ceil(header.size / BLOCK) * BLOCK;
    }
    if (existsSync(dir)) rmdirSync(dir);
    renameSync(partial, dir);
    return true;
  } catch {
    rmSync(partial, { recursive: true, force: true });
    return false;
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
  cached = existsSync(file) ? new BytesBlob(gunzipWhole(readFileSync(file))) : null;
  return cached;
}

export function forgetPgliteTemplate(): void {
  cached = undefined;
}
