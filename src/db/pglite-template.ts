import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

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

/** Changes whenever a migration file or a database package changes, so a stale template is never used. */
function templateKey(): string {
  const hash = createHash('sha256');
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

let cached: Blob | null | undefined;

/** The template, or null when it has not been built for this code (start-up is then just slower). */
export function pgliteTemplate(): Blob | null {
  if (cached !== undefined) return cached;
  const file = templatePath();
  cached = existsSync(file) ? new Blob([readFileSync(file)]) : null;
  return cached;
}

export function forgetPgliteTemplate(): void {
  cached = undefined;
}
