import { readFile, unlink } from 'node:fs/promises';
import type { Queryable } from '../db/index.ts';
import type { FileOperationName } from './file-store.ts';
import { finishOperation, type JournalEntry } from './journal.ts';
import { sha256, type VaultFs } from './vault-fs.ts';
import { versionFileName } from './vault-path.ts';

export type RecoveryDeps = {
  database: Queryable;
  fs: VaultFs;
  step(operation: FileOperationName, step: string, userPath: string): Promise<void>;
  stagingFile(id: string): string;
  archiveFile(userPath: string, name: string): string;
  /** Re-runs a move's steps; each one skips itself when its effect is already there. */
  moveSteps(entry: JournalEntry): Promise<void>;
};

/**
 * Settles one journaled operation from what the vault holds now. The rule that keeps both
 * invariants: a version is only ever renamed (never overwritten or removed), and a new
 * content replaces a path only after the old content sits in the archive.
 */
export async function recoverLocalOperation(
  deps: RecoveryDeps,
  entry: JournalEntry,
): Promise<'completed' | 'rolled_back'> {
  let outcome: 'completed' | 'rolled_back';
  if (entry.operation === 'write' || entry.operation === 'restore')
    outcome = await recoverReplace(deps, entry);
  else if (entry.operation === 'delete') outcome = await recoverDelete(deps, entry);
  else {
    await deps.moveSteps(entry);
    outcome = (await deps.fs.kindOf(entry.target!)) !== null ? 'completed' : 'rolled_back';
  }
  await deps.step(entry.operation, 'recover-finish', entry.path);
  await finishOperation(deps.database, entry.id, outcome);
  return outcome;
}

async function recoverReplace(deps: RecoveryDeps, entry: JournalEntry): Promise<'completed' | 'rolled_back'> {
  const { fs } = deps;
  const staged = deps.stagingFile(entry.id);
  if (await fs.exists(staged)) {
    // Staged in full: finish the job — archive whatever sits at the path, then replace it.
    if ((await fs.kindOf(entry.path)) === 'file') {
      let archive = entry.archiveName ? deps.archiveFile(entry.path, entry.archiveName) : null;
      if (archive === null || (await fs.exists(archive))) {
        // Not the content this operation meant to archive: file it under a new number, never over a version.
        archive = deps.archiveFile(
          entry.path,
          versionFileName(entry.path, await fs.nextArchiveVersion(entry.path)),
        );
      }
      await deps.step(entry.operation, 'recover-archive', entry.path);
      await fs.moveInside(fs.abs(entry.path), archive);
    }
    await deps.step(entry.operation, 'recover-replace', entry.path);
    await fs.moveInside(staged, fs.abs(entry.path));
    return 'completed';
  }
  if (await fs.exists(`${staged}.part`)) {
    await deps.step(entry.operation, 'recover-discard', entry.path);
    // A partial copy of content that never became a version of anything.
    await unlink(`${staged}.part`);
  }
  if ((await fs.kindOf(entry.path)) === 'file') {
    const current = sha256(await readFile(fs.abs(entry.path)));
    if (current === entry.contentHash) return 'completed';
  }
  return 'rolled_back';
}

async function recoverDelete(deps: RecoveryDeps, entry: JournalEntry): Promise<'completed' | 'rolled_back'> {
  const { fs } = deps;
  const archive = deps.archiveFile(entry.path, entry.archiveName!);
  const archived = await fs.exists(archive);
  if ((await fs.kindOf(entry.path)) === 'file') {
    if (archived) return 'rolled_back';
    await deps.step('delete', 'recover-archive', entry.path);
    await fs.moveInside(fs.abs(entry.path), archive);
    return 'completed';
  }
  return archived ? 'completed' : 'rolled_back';
}
