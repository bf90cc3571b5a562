import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { type BackupSources, type BackupSummary, backupsDir, writeBackup } from './backup.ts';

export type BackupReason = 'manual' | 'scheduled' | 'pre-migrate';

const NAME = /^steward-backup-(\d{8}T\d{6}Z)-(manual|scheduled|pre-migrate)\.tar\.gz$/;

/** `20261127T030000Z`: a time for file names, sorting as it reads. */
export function backupStamp(at: Date): string {
  return at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
}

/** `steward-backup-20261127T030000Z-scheduled.tar.gz`: sorts by time, says why it was made. */
export function backupFileName(at: Date, reason: BackupReason): string {
  return `steward-backup-${backupStamp(at)}-${reason}.tar.gz`;
}

/**
 * Writes a backup to `file` through a partial file renamed into place when complete, so
 * `file` is either a whole archive or absent.
 */
export async function writeBackupFile(sources: BackupSources, file: string): Promise<BackupSummary> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const partial = `${file}.partial-${process.pid}`;
  try {
    const summary = await writeBackup(sources, createWriteStream(partial, { mode: 0o600 }));
    await rename(partial, file);
    return summary;
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
}

export type StoredBackup = { file: string; at: Date; reason: BackupReason; bytes: number };

/** Backups Steward made in `<data dir>/backups`, newest first. */
export async function listBackups(dataDir: string): Promise<StoredBackup[]> {
  const dir = backupsDir(dataDir);
  const names = await readdir(dir).catch(() => [] as string[]);
  const backups: StoredBackup[] = [];
  for (const name of names) {
    const match = NAME.exec(name);
    if (!match) continue;
    const stamp = match[1]!;
    const at = new Date(
      `${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 8)}T${stamp.slice(9, 11)}:${stamp.slice(11, 13)}:${stamp.slice(13, 15)}Z`,
    );
    const info = await stat(path.join(dir, name)).catch(() => null);
    if (info)
      backups.push({ file: path.join(dir, name), at, reason: match[2] as BackupReason, bytes: info.size });
  }
  return backups.sort((a, b) => b.at.getTime() - a.at.getTime() || b.file.localeCompare(a.file));
}

/** Removes all but the `keep` newest backups in `<data dir>/backups`. Returns the removed files. */
export async function pruneBackups(dataDir: string, keep: number): Promise<string[]> {
  const removed: string[] = [];
  for (const backup of (await listBackups(dataDir)).slice(keep)) {
    await rm(backup.file, { force: true });
    removed.push(backup.file);
  }
  return removed;
}

/** Writes a backup into `<data dir>/backups`, then keeps only the `keep` newest there. */
export async function writeKeptBackup(
  sources: BackupSources,
  reason: BackupReason,
  keep: number,
): Promise<BackupSummary & { file: string; pruned: string[] }> {
  const now = sources.now ?? (() => new Date());
  const file = path.join(backupsDir(sources.dataDir), backupFileName(now(), reason));
  const summary = await writeBackupFile(sources, file);
  const pruned = await pruneBackups(sources.dataDir, Math.max(1, keep));
  return { ...summary, file, pruned };
}
