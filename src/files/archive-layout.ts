import { lstat, mkdir, readdir, rename, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { VaultFs } from './vault-fs.ts';
import {
  ARCHIVE_DIR,
  ARCHIVE_LAYOUT_FILE,
  ARCHIVE_LAYOUT_VERSION,
  archiveSegments,
  STAGING_DIR,
} from './vault-path.ts';

/** Called before each step of the archive migration; tests throw from it to crash it. */
export type LayoutStepHook = (step: string) => void | Promise<void>;

/** Where the archive is rebuilt before it replaces `.archive` (inside the reserved staging folder). */
const NEXT_ARCHIVE = 'archive-next';

/**
 * Makes sure a vault's `.archive` uses the current layout (`archiveSegments`), migrating the
 * previous one (`.archive/<path>/vN`, where the versions of `col` and a file `col/v1` could
 * collide) if it finds it. Returns how many archived files it moved (0 when nothing was to do).
 *
 * Crash-safe and idempotent: the new archive is built in `.staging/archive-next` by renames
 * only (a version is never copied or removed), marked complete, and then renamed over; a run
 * after a crash carries on from whatever step it reached. Anything in the old archive it does
 * not recognize (a link, a socket) is kept in `.staging/archive-previous-<time>`.
 */
export async function ensureArchiveLayout(root: string, onStep: LayoutStepHook = () => {}): Promise<number> {
  const archive = path.join(root, ARCHIVE_DIR);
  const marker = path.join(archive, ARCHIVE_LAYOUT_FILE);
  if (await isFile(marker)) return 0;
  const next = path.join(root, STAGING_DIR, NEXT_ARCHIVE);
  const nextMarker = path.join(next, ARCHIVE_LAYOUT_FILE);
  let moved = 0;
  if (!(await isFile(nextMarker))) {
    if (await isDirectory(archive)) moved += await moveVersions(archive, next, onStep);
    await onStep('mark');
    await new VaultFs(root).writeDurably(nextMarker, Buffer.from(`${ARCHIVE_LAYOUT_VERSION}\n`));
  }
  if (await exists(archive)) {
    // Files only ever land here between a crash and this run: move them too, then drop the empty folders.
    if (await isDirectory(archive)) moved += await moveVersions(archive, next, onStep);
    await onStep('clear');
    if (!(await isDirectory(archive)) || !(await removeEmptyFolders(archive)))
      await rename(archive, path.join(root, STAGING_DIR, `archive-previous-${Date.now()}`));
  }
  await onStep('swap');
  await rename(next, archive);
  return moved;
}

/** Moves every file below `from` (the previous layout) to its place below `to`; returns the count. */
async function moveVersions(from: string, to: string, onStep: LayoutStepHook): Promise<number> {
  let moved = 0;
  const walk = async (dir: string, segments: string[]): Promise<void> => {
    for (const dirent of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const source = path.join(dir, dirent.name);
      // In the previous layout a folder is a name of a path, a file is a version of it.
      if (dirent.isDirectory()) await walk(source, [...segments, ...archiveSegments(dirent.name)]);
      else if (dirent.isFile()) {
        const target = path.join(to, ...segments, dirent.name);
        if (await exists(target)) continue;
        await onStep('move');
        await mkdir(path.dirname(target), { recursive: true });
        await rename(source, target);
        moved++;
      }
    }
  };
  await walk(from, []);
  return moved;
}

/** Removes `dir` if it holds nothing but empty folders; false when something else is in it. */
async function removeEmptyFolders(dir: string): Promise<boolean> {
  let empty = true;
  for (const dirent of await readdir(dir, { withFileTypes: true })) {
    if (!dirent.isDirectory() || !(await removeEmptyFolders(path.join(dir, dirent.name)))) empty = false;
  }
  if (empty) await rmdir(dir);
  return empty;
}

const info = (file: string) => lstat(file).catch(() => null);
const exists = async (file: string) => (await info(file)) !== null;
const isFile = async (file: string) => (await info(file))?.isFile() === true;
const isDirectory = async (file: string) => (await info(file))?.isDirectory() === true;
