import { lstat, mkdir, readdir, readFile, rename, rmdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Database, Queryable } from '../db/index.ts';
import { errorMessage } from '../errors.ts';
import { listUserIds, userIdProblem } from '../users/index.ts';
import { ensureArchiveLayout, type LayoutStepHook } from './archive-layout.ts';
import { vaultDirName } from './user-vault-dir.ts';

/** `<data dir>/files/.layout`: present once every vault has its own folder (`vaultDirName`). */
export const FILES_LAYOUT_FILE = '.layout';
const FILES_LAYOUT_VERSION = '2';

export type VaultPreparation = {
  /** Vaults moved out of the files root's previous layout (`files/<user id>/`, nested ids inside others). */
  movedUsers: Array<{ userId: string; from: string; to: string }>;
  /** Archived versions moved to the current archive layout. */
  migratedVersions: number;
  /** What could not be done, one sentence each; the vault concerned is left as it was. */
  problems: string[];
};

/**
 * Brings the files root to the current layout before anything uses it (at start-up): each
 * user's vault in its own folder directly in the root (moved there from `files/<user id>/`,
 * where `nest/child` lay inside `nest`), and each vault's archive in the layout no file name
 * can collide with. Moves are renames, so nothing is copied or lost; a run after a crash
 * carries on. Never throws for one vault's trouble: it is returned in `problems`.
 */
export async function prepareVaults(options: {
  database: Database;
  filesDir: string;
  /** Called before each step; one that throws stops the run where it is (tests crash it so). */
  onStep?: LayoutStepHook;
}): Promise<VaultPreparation> {
  const { database, filesDir } = options;
  const hook = options.onStep ?? (() => {});
  // A hook that throws stops the whole run (a crash, for the tests), not just one vault.
  const onStep: LayoutStepHook = async (step) => {
    try {
      await hook(step);
    } catch (error) {
      throw new HookStopped(error);
    }
  };
  const result: VaultPreparation = { movedUsers: [], migratedVersions: 0, problems: [] };
  const run = async () => {
    await mkdir(filesDir, { recursive: true });
    const marker = path.join(filesDir, FILES_LAYOUT_FILE);
    if ((await readFile(marker, 'utf8').catch(() => '')).trim() !== FILES_LAYOUT_VERSION) {
      await moveUserVaults(database, filesDir, onStep, result);
      await onStep('mark-files');
      await writeFile(`${marker}.tmp`, `${FILES_LAYOUT_VERSION}\n`);
      await rename(`${marker}.tmp`, marker);
    }
    const owners = await vaultOwners(database, filesDir);
    for (const name of await readdir(filesDir)) {
      if (name.startsWith('.')) continue;
      const root = path.join(filesDir, name);
      const owner = owners.get(name);
      // A user's vault may be a link the owner made; a link of no user is followed nowhere.
      const info = await (owner ? stat(root) : lstat(root)).catch(() => null);
      if (!info?.isDirectory()) continue;
      const migrate = () => ensureArchiveLayout(root, onStep);
      try {
        // Under the vault's own lock: another instance may be writing to it right now.
        result.migratedVersions += await (owner
          ? database.withAdvisoryLock(`files:${owner}`, migrate)
          : migrate());
      } catch (error) {
        if (error instanceof HookStopped) throw error;
        result.problems.push(`the archive of ${name} could not be migrated: ${errorMessage(error)}`);
      }
    }
    return result;
  };
  return database.withAdvisoryLock('files:layout', () =>
    run().catch((error: unknown) => {
      throw error instanceof HookStopped ? error.cause : error;
    }),
  );
}

/**
 * Moves `files/<user id>` to `files/<vaultDirName(user id)>` for every known user whose id
 * is not already its folder name, deepest ids first (so `a/b` leaves `a` before `a` moves).
 * The folder that was a nested user's vault goes to that user: by the previous layout's own
 * rule it was theirs (and what its parent saw of it was the leak).
 */
async function moveUserVaults(
  database: Database,
  filesDir: string,
  onStep: LayoutStepHook,
  result: VaultPreparation,
): Promise<void> {
  const ids = await knownUserIds(database);
  const depth = (id: string) => id.split('/').length;
  const ordered = [...ids].filter((id) => !userIdProblem(id)).sort((a, b) => depth(b) - depth(a));
  for (const userId of ordered) {
    const name = vaultDirName(userId);
    if (name === userId) continue;
    const from = path.join(filesDir, ...userId.split('/'));
    // A link is not a vault the previous layout made; leave it alone.
    if (!(await lstat(from).catch(() => null))?.isDirectory()) continue;
    const to = path.join(filesDir, name);
    if (await lstat(to).catch(() => null)) {
      result.problems.push(
        `the files of user ${userId} are in both ${path.relative(filesDir, from)} and ${name}: nothing was moved; merge them by hand`,
      );
      continue;
    }
    await onStep('move-user');
    try {
      await rename(from, to);
    } catch (error) {
      // Not retried at the next start (the root is marked done): by then `from` may be a folder its parent made.
      result.problems.push(
        `the files of user ${userId} could not be moved from ${path.relative(filesDir, from)} to ${name} (${errorMessage(error)}): move that folder by hand while Steward is stopped`,
      );
      continue;
    }
    result.movedUsers.push({ userId, from: path.relative(filesDir, from), to: name });
    // The folders that only held the moved vault (`files/googlechat:users/` when no such user has files).
    for (let parent = path.dirname(from); parent !== filesDir; parent = path.dirname(parent)) {
      const removed = await rmdir(parent).then(
        () => true,
        () => false,
      );
      if (!removed) break;
    }
  }
}

/** The user each vault folder in the files root belongs to (folders of no user are left out). */
export async function vaultOwners(database: Queryable, filesDir: string): Promise<Map<string, string>> {
  const names = new Set(await readdir(filesDir).catch(() => [] as string[]));
  const owners = new Map<string, string>();
  // The users table only: it is small, and this runs every few minutes (reconcile, watcher).
  for (const userId of await listUserIds(database)) {
    if (userIdProblem(userId)) continue;
    const name = vaultDirName(userId);
    if (names.has(name)) owners.set(name, userId);
  }
  return owners;
}

/** Users, and ids that have file operations or index rows (the one-time migration: a vault can outlive its user row). */
async function knownUserIds(database: Queryable): Promise<Set<string>> {
  const ids = new Set(await listUserIds(database));
  const withFiles = await database.query<{ user_id: string }>(
    `SELECT DISTINCT user_id FROM file_operations UNION SELECT DISTINCT user_id FROM content_index WHERE user_id <> ''`,
  );
  for (const row of withFiles) ids.add(row.user_id);
  return ids;
}

class HookStopped extends Error {
  constructor(cause: unknown) {
    super('the step hook threw', { cause });
  }
}
