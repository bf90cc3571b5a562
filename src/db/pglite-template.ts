import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';

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
 * A fresh PGlite cluster (initdb + the vector extension) as a tarball. PGlite runs initdb
 * in WASM on every new data dir, which takes seconds; unpacking this takes about one. Built by
 * `npm install` (postinstall) and keyed by the PGlite and pgvector versions.
 */
export function templatePath(): string {
  const name = `pglite-${versionOf('@electric-sql/pglite')}-vector-${versionOf('@electric-sql/pglite-pgvector')}.tar.gz`;
  return path.join(ROOT, 'node_modules', '.cache', 'steward', name);
}

let cached: Blob | null | undefined;

/** The template, or null when it has not been built (start-up is then just slower). */
export function pgliteTemplate(): Blob | null {
  if (cached !== undefined) return cached;
  const file = templatePath();
  cached = existsSync(file) ? new Blob([readFileSync(file)]) : null;
  return cached;
}

export async function buildPgliteTemplate(): Promise<string> {
  const file = templatePath();
  const client = await PGlite.create(undefined, { extensions: { vector } });
  try {
    await client.exec('CREATE EXTENSION IF NOT EXISTS vector');
    const dump = await client.dumpDataDir('gzip');
    mkdirSync(path.dirname(file), { recursive: true });
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
    renameSync(partial, file);
    cached = undefined;
    return file;
  } finally {
    await client.close();
  }
}
