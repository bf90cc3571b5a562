/**
 * Paths as users and models write them: relative to the user's root, `/` between folders.
 * Everything that could leave the root (absolute paths, `..`, drive letters, backslashes) is
 * refused with a message that says how to write the path instead.
 */

/** Vault folders that hold Steward's own data; hidden from listings and closed to users. */
export const ARCHIVE_DIR = '.archive';
export const STAGING_DIR = '.staging';
export const RESERVED_NAMES: readonly string[] = [ARCHIVE_DIR, STAGING_DIR];

export type PathCheck = { ok: true; path: string } | { ok: false; message: string };

/**
 * Normalizes a user path (`notes//plan.md`, `./notes/plan.md` → `notes/plan.md`). The root
 * itself is `''` and is accepted only with `allowRoot`.
 */
export function normalizeUserPath(input: string, options: { allowRoot?: boolean } = {}): PathCheck {
  const raw = input.trim();
  if (raw.includes('\0')) return { ok: false, message: 'the path contains a NUL character' };
  if (raw.includes('\\'))
    return {
      ok: false,
      message: `"${raw}" contains a backslash: separate folders with /, e.g. notes/plan.md`,
    };
  if (raw.startsWith('/') || /^[A-Za-z]:/.test(raw) || raw.startsWith('~'))
    return {
      ok: false,
      message: `"${raw}" is an absolute path: paths are relative to your files' root, e.g. notes/plan.md`,
    };
  const segments = raw.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..'))
    return {
      ok: false,
      message: `"${raw}" goes up with "..": paths stay inside your files' root; write it from the root, e.g. notes/plan.md`,
    };
  if (segments.length === 0) {
    return options.allowRoot
      ? { ok: true, path: '' }
      : { ok: false, message: 'the path is empty: name a file, e.g. notes/plan.md' };
  }
  if (RESERVED_NAMES.includes(segments[0]!))
    return {
      ok: false,
      message: `"${segments[0]}" is reserved for Steward's own data (versions live there): use files.versions and files.restore`,
    };
  const tooLong = segments.find((segment) => Buffer.byteLength(segment) > 255);
  if (tooLong) return { ok: false, message: `the name "${tooLong.slice(0, 40)}…" is longer than 255 bytes` };
  return { ok: true, path: segments.join('/') };
}

/** `notes/plan.md` → `notes`; a top-level name → `''`. */
export function parentOf(userPath: string): string {
  const slash = userPath.lastIndexOf('/');
  return slash < 0 ? '' : userPath.slice(0, slash);
}

/** `notes/plan.md` → `plan.md`. */
export function baseName(userPath: string): string {
  return userPath.slice(userPath.lastIndexOf('/') + 1);
}

/** `plan.md` → `.md`; `Makefile` and `.env` → `''`. */
export function extensionOf(userPath: string): string {
  const name = baseName(userPath);
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot) : '';
}

/** The archive file name of version `n` of `userPath`: `v3.md`. */
export function versionFileName(userPath: string, version: number): string {
  return `v${version}${extensionOf(userPath)}`;
}

/** The version number in an archive file name, or null for anything else. */
export function versionFromFileName(name: string): number | null {
  const match = /^v(\d+)(\.[^/]*)?$/.exec(name);
  return match ? Number(match[1]) : null;
}

/** True when `inner` is `outer` or lies below it (both normalized user paths). */
export function isWithin(inner: string, outer: string): boolean {
  return outer === '' || inner === outer || inner.startsWith(`${outer}/`);
}
