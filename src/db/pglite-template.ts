import { createHash } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, renameSync, rmdirSync, rmSync } from 'node:fs';
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

/**
 * The same cluster unpacked into a directory, for new data dirs on disk: copying its files is
 * much quicker than PGlite unpacking the tarball file by file.
 */
export function templateDirPath(): string {
  return path.join(ROOT, 'node_modules', '.cache', 'steward', `pglite-template-${templateKey()}`);
}

/**
 * Makes `dir` (missing or empty) a copy of the template directory, atomically: a crash leaves
 * either no cluster or a whole one. False when there is no template directory for this code or
 * `dir` holds files (the caller then falls back to the tarball).
 */
export function copyTemplateDir(dir: string): boolean {
  const template = templateDirPath();
  if (!existsSync(path.join(template, 'PG_VERSION'))) return false;
  if (existsSync(dir) && readdirSync(dir).length > 0) return false;
  const partial = `${dir}.template-${process.pid}.tmp`;
  try {
    cpSync(template, partial, { recursive: true });
    if (existsSync(dir)) rmdirSync(dir);
    renameSync(partial, dir);
    return true;
  } catch {
    rmSync(partial, { recursive: true, force: true });
    return false;
  }
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
