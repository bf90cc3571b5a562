import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DataDirLockedError, StewardError } from '../errors.ts';

export type LockOwner = { pid: number; port: number | null; startedAt: string };

const LOCK_FILE = 'steward.lock';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The live process that owns `dataDir`, or null when none does (no lock, or a dead owner). */
export function readLockOwner(dataDir: string): LockOwner | null {
  let owner: LockOwner;
  try {
    owner = JSON.parse(readFileSync(path.join(dataDir, LOCK_FILE), 'utf8')) as LockOwner;
  } catch {
    return null;
  }
  if (typeof owner.pid !== 'number' || !isAlive(owner.pid)) return null;
  return owner;
}

export type DataDirLock = {
  /** Records the port the owner serves on, so CLI commands can reach it. */
  setPort(port: number): void;
  release(): void;
};

/**
 * Makes this process the single owner of an embedded data dir. PGlite does not lock its
 * folder itself; a second process writing to it would lose data. A stale lock (dead pid) is
 * taken over; a live owner raises DataDirLockedError naming it.
 */
export function acquireDataDirLock(dataDir: string): DataDirLock {
  const file = path.join(dataDir, LOCK_FILE);
  try {
    // Private to Steward's user: the database, conversations and credentials live here.
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    // Writable? A read-only dir fails here, with a fix, rather than deep inside the database.
    writeFileSync(path.join(dataDir, '.steward-write-check'), '');
    rmSync(path.join(dataDir, '.steward-write-check'), { force: true });
  } catch (error) {
    throw dataDirProblem(dataDir, error);
  }
  const owner = readLockOwner(dataDir);
  if (owner && owner.pid !== process.pid) throw new DataDirLockedError(dataDir, owner.pid, owner.port);
  const write = (port: number | null, flag: 'w' | 'wx') =>
    writeFileSync(file, JSON.stringify({ pid: process.pid, port, startedAt: new Date().toISOString() }), {
      flag,
    });
  try {
    write(null, owner ? 'w' : 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // A stale file from a dead process (readLockOwner said nobody lives there): take it over.
    const raced = readLockOwner(dataDir);
    if (raced && raced.pid !== process.pid) throw new DataDirLockedError(dataDir, raced.pid, raced.port);
    write(null, 'w');
  }
  let released = false;
  const onExit = () => release();
  function release() {
    if (released) return;
    released = true;
    process.off('exit', onExit);
    const current = readLockOwner(dataDir);
    if (current?.pid === process.pid) rmSync(file, { force: true });
  }
  process.on('exit', onExit);
  return {
    setPort: (port) => write(port, 'w'),
    release,
  };
}

/** One line, with the fix, for a data dir that cannot be created or written. */
function dataDirProblem(dataDir: string, error: unknown): Error {
  const code = (error as NodeJS.ErrnoException).code;
  const fix = 'set STEWARD_DATA_DIR to a writable folder (or DATABASE_URL to use a PostgreSQL server)';
  const what =
    code === 'EROFS'
      ? 'is on a read-only file system'
      : code === 'EACCES' || code === 'EPERM'
        ? 'is not writable by this user'
        : code === 'ENOENT' || code === 'ENOTDIR'
          ? 'cannot be created: a folder above it is missing or is a file'
          : code === 'EEXIST'
            ? 'is a file, not a folder'
            : null;
  if (!what) return error as Error;
  return new StewardError('data_dir_unusable', `The data dir ${dataDir} ${what} (${code}): ${fix}.`, {
    cause: error,
  });
}
