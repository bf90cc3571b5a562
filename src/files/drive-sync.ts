import { readFile } from 'node:fs/promises';
import type { Queryable } from '../db/index.ts';
import { type DriveClient, type DriveFile, GOOGLE_DOC_MIME, remoteVersion } from './drive-client.ts';
import type { DriveFileStore } from './drive-file-store.ts';
import { exportFormat, isNative } from './drive-formats.ts';
import { done, type FileOutcome, failure } from './file-store.ts';
import type { LocalVault } from './local-vault.ts';
import { forgetSyncedFile, type SyncedFile, saveSyncedFile, syncedFiles } from './sync-state.ts';
import { sha256 } from './vault-fs.ts';
import { baseName, extensionOf, parentOf } from './vault-path.ts';

export type SyncReport = {
  folderName: string;
  pulled: string[];
  pushed: string[];
  archivedHere: string[];
  archivedInDrive: string[];
  conflicts: Array<{ path: string; conflictPath: string }>;
  skipped: Array<{ path: string; reason: string }>;
  unchanged: number;
};

export type SyncDeps = {
  database: Queryable;
  userId: string;
  vault: LocalVault;
  drive: DriveFileStore;
  client: DriveClient;
  folderName: string;
  signal?: AbortSignal;
};

/**
 * Two-way sync of a user's vault with their Drive folder against the state of the last
 * sync: a side that changed wins; both changed keeps both (Drive's copy beside the local
 * one); a deletion on one side archives the file on the other. Every replace on either side
 * goes through its store, so the replaced version is archived first.
 */
export async function syncWithDrive(deps: SyncDeps): Promise<FileOutcome<SyncReport>> {
  const { database, userId, vault, drive, signal } = deps;
  const report: SyncReport = {
    folderName: deps.folderName,
    pulled: [],
    pushed: [],
    archivedHere: [],
    archivedInDrive: [],
    conflicts: [],
    skipped: [],
    unchanged: 0,
  };
  const scan = await vault.fs.filesBelow('', signal ? { signal } : {});
  // A file past the walk's bounds would look deleted here, and be archived in Drive.
  if (scan.limited)
    return failure(
      'unsupported',
      `nothing was synced: ${scan.limited} in your files, and sync needs all of them; move some files into fewer, shallower folders`,
    );
  const remote = new Map((await drive.walk(signal)).map(({ path, file }) => [path, file]));
  const local = new Set(scan.files.map((entry) => entry.path));
  const state = await syncedFiles(database, userId);
  const conflictCopies = new Set(
    [...state.values()].flatMap((file) => (file.conflictPath ? [file.conflictPath] : [])),
  );
  const paths = [...new Set([...remote.keys(), ...local, ...state.keys()])]
    .filter((path) => !conflictCopies.has(path))
    .sort();

  const pull = async (path: string, file: DriveFile, content: Buffer) => {
    must(await vault.write(path, content));
    await save(path, file, sha256(content));
    report.pulled.push(path);
  };
  const push = async (path: string, content: Buffer) => {
    must(await drive.write(path, content));
    const file = await drive.fileAt(path);
    if (!file) throw new Error(`Drive has no "${path}" right after it was uploaded`);
    await save(path, file, sha256(content));
    report.pushed.push(path);
  };
  const save = (path: string, file: DriveFile, localHash: string, conflictPath: string | null = null) =>
    saveSyncedFile(database, userId, {
      path,
      driveFileId: file.id,
      mimeType: file.mimeType,
      remoteVersion: remoteVersion(file),
      localHash,
      conflictPath,
    });
  const conflict = async (
    path: string,
    file: DriveFile,
    remoteContent: Buffer,
    synced: SyncedFile | undefined,
  ) => {
    const conflictPath = conflictName(path);
    must(await vault.write(conflictPath, remoteContent));
    // The local side keeps counting as changed, so once the copy is gone the local version is pushed.
    await save(path, file, synced?.localHash ?? '', conflictPath);
    report.conflicts.push({ path, conflictPath });
  };

  for (const path of paths) {
    signal?.throwIfAborted();
    try {
      await syncPath(path);
    } catch (error) {
      if (!(error instanceof SkipFile)) throw error;
      report.skipped.push({ path, reason: error.message });
    }
  }
  return done(report);

  async function syncPath(path: string): Promise<void> {
    const file = remote.get(path);
    let synced = state.get(path);
    const localContent = local.has(path) ? await readFile(vault.fs.abs(path)) : null;
    if (synced?.conflictPath) {
      if (local.has(synced.conflictPath)) {
        report.conflicts.push({ path, conflictPath: synced.conflictPath });
        return;
      }
      synced = { ...synced, conflictPath: null };
    }
    if (file && isNative(file.mimeType) && !exportFormat(file.mimeType)) {
      report.skipped.push({ path, reason: 'this kind of Google file has no text export; open it in Drive' });
      return;
    }
    const remoteChanged = file
      ? !synced || synced.driveFileId !== file.id || synced.remoteVersion !== remoteVersion(file)
      : false;
    const localChanged = localContent ? !synced || synced.localHash !== sha256(localContent) : false;

    if (file && localContent) {
      if (!remoteChanged && !localChanged) {
        report.unchanged++;
        if (synced !== state.get(path)) await save(path, file, synced!.localHash);
        return;
      }
      if (localChanged && !remoteChanged) {
        if (isNative(file.mimeType) && file.mimeType !== GOOGLE_DOC_MIME) {
          report.skipped.push({
            path,
            reason: 'an exported Google Sheet or Slides file is read-only here; edit it in Drive',
          });
          return;
        }
        await push(path, localContent);
        return;
      }
      const remoteContent = await remoteBytes(deps.client, file);
      if (remoteContent.equals(localContent)) {
        await save(path, file, sha256(localContent));
        report.unchanged++;
      } else if (!localChanged) await pull(path, file, remoteContent);
      else await conflict(path, file, remoteContent, synced);
    } else if (file) {
      if (synced && !remoteChanged) {
        must(await drive.delete(path));
        await forgetSyncedFile(database, userId, path);
        report.archivedInDrive.push(path);
      } else await pull(path, file, await remoteBytes(deps.client, file));
    } else if (localContent) {
      if (synced && !localChanged) {
        must(await vault.delete(path));
        await forgetSyncedFile(database, userId, path);
        report.archivedHere.push(path);
      } else await push(path, localContent);
    } else await forgetSyncedFile(database, userId, path);
  }
}

async function remoteBytes(client: DriveClient, file: DriveFile): Promise<Buffer> {
  const format = exportFormat(file.mimeType);
  return format ? client.export(file.id, format.mimeType) : client.download(file.id);
}

/** `notes/plan.md` → `notes/plan (Drive conflict).md` */
export function conflictName(path: string): string {
  const ext = extensionOf(path);
  const name = baseName(path);
  const stem = ext ? name.slice(0, -ext.length) : name;
  const parent = parentOf(path);
  return `${parent ? `${parent}/` : ''}${stem} (Drive conflict)${ext}`;
}

/** A file sync cannot handle (a name the vault refuses, a folder where a file is): reported, not fatal. */
class SkipFile extends Error {}

function must<T>(outcome: FileOutcome<T>): T {
  if (!outcome.ok) throw new SkipFile(outcome.message);
  return outcome.value;
}
