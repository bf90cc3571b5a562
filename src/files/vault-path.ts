import { createHash } from 'node:crypto';

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
  const unsafe = unsafeNameCharacter(raw);
  if (unsafe) return { ok: false, message: unsafe };
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

// Control characters (C0, DEL, C1) and the bidirectional-text controls: marks, embeddings,
// overrides and isolates. Each can make a name read as something else (`evil\u202Edm.exe`
// shows as `evilexe.md`) or break the line a listing prints it on.
const UNSAFE_CHARACTERS = /[\p{Cc}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/gu;

const UNSAFE_NAMES: Record<string, string> = {
  '\n': 'a line break',
  '\r': 'a carriage return',
  '\t': 'a tab',
  '\0': 'a NUL character',
  '\u202E': 'a right-to-left override',
  '\u202D': 'a left-to-right override',
};

/** `U+202E` for a character. */
const codePoint = (char: string) => `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

/**
 * Why a path cannot be a file name here (a control or bidirectional-text character, named by
 * its code point), or null. The message never repeats the raw name: it would spoof the reader too.
 */
export function unsafeNameCharacter(input: string): string | null {
  const match = input.match(UNSAFE_CHARACTERS);
  if (!match) return null;
  const char = match[0];
  const what =
    UNSAFE_NAMES[char] ?? (/\p{Cc}/u.test(char) ? 'a control character' : 'a bidirectional-text control');
  return `the path "${displayPath(input)}" contains ${codePoint(char)} (${what}), which can disguise a file name: names may not contain control characters or bidirectional-text controls (U+200E, U+200F, U+202A–U+202E, U+2066–U+2069); write the name without it, e.g. "${withoutUnsafeCharacters(input)}"`;
}

/** `text` without the characters `unsafeNameCharacter` refuses (to make a name from outside text). */
export function withoutUnsafeCharacters(text: string): string {
  return text.replace(UNSAFE_CHARACTERS, '');
}

/**
 * A path as it is safe to show: control and bidirectional-text characters (in files put in the
 * vault by hand) written as `<U+202E>`, so a listing shows what the name really holds.
 */
export function displayPath(userPath: string): string {
  return userPath.replace(UNSAFE_CHARACTERS, (char) => `<${codePoint(char)}>`);
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

/**
 * Where the versions of a path live below `.archive`: `notes/plan.md` → `['+notes', '+plan.md']`.
 * Every name of the path gets a `+` (a name past 254 bytes becomes `=` and its SHA-256), and a
 * version file (`v3.md`) starts with neither, so the versions of `col` (`+col/v1`) and the
 * files below a folder `col` (`+col/+v1/…`) never share a name, whatever the user calls them.
 */
export function archiveSegments(userPath: string): string[] {
  if (userPath === '') return [];
  return userPath
    .split('/')
    .map((name) =>
      Buffer.byteLength(name) <= 254 ? `+${name}` : `=${createHash('sha256').update(name).digest('hex')}`,
    );
}

/**
 * A file directly in `.archive` (where the layout above has only `+`/`=` folders, and the
 * previous layout only folders) that says the archive uses that layout.
 */
export const ARCHIVE_LAYOUT_FILE = 'layout';
export const ARCHIVE_LAYOUT_VERSION = '2';

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
