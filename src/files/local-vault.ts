import { randomUUID } from 'node:crypto';
import { readFile, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { type Database, KeyedQueue } from '../db/index.ts';
import { errorMessage, StewardError } from '../errors.ts';
import { ensureArchiveLayout } from './archive-layout.ts';
import {
  type DeleteReport,
  done,
  type FileEntry,
  type FileOperationName,
  type FileOutcome,
  type FileStore,
  type FileVersion,
  failure,
  type MoveReport,
  type RecoveryReport,
  type RestoreReport,
  type StepHook,
  type WriteReport,
} from './file-store.ts';
import { finishOperation, type JournalEntry, pendingOperations, recordOperation } from './journal.ts';
import { recoverLocalOperation } from './local-vault-recovery.ts';
import { type QuarantineRecord, quarantineOperation } from './quarantine.ts';
import { userVaultDir } from './user-vault-dir.ts';
import { sha256, VaultFs } from './vault-fs.ts';
import { baseName, isWithin, parentOf, STAGING_DIR, versionFileName } from './vault-path.ts';

export type LocalVaultOptions = {
  database: Database;
  /** `<data dir>/files` */
  filesDir: string;
  userId: string;
  onStep?: StepHook;
  /**
   * Told of every operation recovery set aside (logged, alerted). Must not throw. Recovery
   * itself goes on either way: one operation it cannot settle never blocks the rest.
   */
  onQuarantine?: (record: QuarantineRecord) => void;
  randomId?: () => string;
};

// Every vault of the process shares one queue per user: two skill calls never interleave steps.
const vaultQueues = new KeyedQueue();
// Vault roots whose archive layout this process has checked (see ensureArchiveLayout).
const preparedRoots = new Set<string>();

/**
 * Runs `fn` while no operation runs on `userId`'s local vault, in this process and (on a server
 * database) in every process: what `fn` reads of the vault is never half an operation.
 */
export function withVaultLock<T>(
  database: Database,
  filesDir: string,
  userId: string,
  fn: () => Promise<T>,
): Promise<T> {
  return vaultQueues.run(userVaultDir(filesDir, userId), () =>
    database.withAdvisoryLock(`files:${userId}`, fn),
  );
}

/**
 * The embedded FileStore: a folder per user, `userVaultDir(<data dir>/files, user id)`, with
 * each replaced or deleted version kept as a plain copy under `.archive/+<name>/+<name>/vN.ext`
 * (see `archiveSegments`). Every operation is journaled before it starts and runs as small
 * steps, each of which leaves the vault in a state `recover()` can complete or roll back; one
 * that recovery cannot settle is set aside (quarantined) and reported, never replayed again.
 * Errors show paths relative to the vault, never the server's folders.
 */
export class LocalVault implements FileStore {
  readonly kind = 'local' as const;
  readonly userId: string;
  readonly fs: VaultFs;
  readonly #database: Database;
  readonly #filesDir: string;
  readonly #onStep: StepHook;
  readonly #onQuarantine: (record: QuarantineRecord) => void;
  readonly #randomId: () => string;

  constructor(options: LocalVaultOptions) {
    this.userId = options.userId;
    this.fs = new VaultFs(userVaultDir(options.filesDir, options.userId));
    this.#database = options.database;
    this.#filesDir = options.filesDir;
    this.#onStep = options.onStep ?? (() => undefined);
    this.#onQuarantine = options.onQuarantine ?? (() => undefined);
    this.#randomId = options.randomId ?? (() => randomUUID());
  }

  list(dir: string): Promise<FileOutcome<FileEntry[]>> {
    return this.#reading(() => this.#list(dir));
  }

  stat(input: string): Promise<FileOutcome<FileEntry>> {
    return this.#reading(() => this.#stat(input));
  }

  read(input: string): Promise<FileOutcome<Buffer>> {
    return this.#reading(() => this.#read(input));
  }

  versions(input: string): Promise<FileOutcome<FileVersion[]>> {
    return this.#reading(() => this.#versions(input));
  }

  readVersion(input: string, version: number): Promise<FileOutcome<Buffer>> {
    return this.#reading(() => this.#readVersion(input, version));
  }

  async #list(dir: string): Promise<FileOutcome<FileEntry[]>> {
    const resolved = await this.fs.resolve(dir, { allowRoot: true });
    if (!resolved.ok) return resolved;
    const kind = await this.fs.kindOf(resolved.value);
    if (kind === null) return failure('not_found', `there is no folder "${resolved.value}"`);
    if (kind === 'file')
      return failure('not_a_folder', `"${resolved.value}" is a file: read it with files.read`);
    return done(await this.fs.children(resolved.value));
  }

  async #stat(input: string): Promise<FileOutcome<FileEntry>> {
    const resolved = await this.fs.resolve(input);
    if (!resolved.ok) return resolved;
    const entry = await this.fs.entry(resolved.value);
    return entry ? done(entry) : notFound(resolved.value);
  }

  async #read(input: string): Promise<FileOutcome<Buffer>> {
    const resolved = await this.fs.resolve(input);
    if (!resolved.ok) return resolved;
    const kind = await this.fs.kindOf(resolved.value);
    if (kind === null) return notFound(resolved.value);
    if (kind === 'folder')
      return failure('not_a_file', `"${resolved.value}" is a folder: list it with files.list`);
    return done(await readFile(this.fs.abs(resolved.value)));
  }

  async #versions(input: string): Promise<FileOutcome<FileVersion[]>> {
    const resolved = await this.fs.resolve(input);
    if (!resolved.ok) return resolved;
    const versions = await this.fs.versions(resolved.value);
    return versions.length > 0 ? done(versions) : notFound(resolved.value);
  }

  async #readVersion(input: string, version: number): Promise<FileOutcome<Buffer>> {
    const resolved = await this.fs.resolve(input);
    if (!resolved.ok) return resolved;
    const versions = await this.fs.versions(resolved.value);
    const wanted = versions.find((item) => item.version === version);
    if (!wanted) return noSuchVersion(resolved.value, versions);
    if (wanted.current) return done(await readFile(this.fs.abs(resolved.value)));
    return done(
      await readFile(path.join(this.fs.archiveDir(resolved.value), versionFileName(resolved.value, version))),
    );
  }

  write(input: string, content: Buffer): Promise<FileOutcome<WriteReport>> {
    return this.#exclusive(async () => {
      const resolved = await this.#writable(input);
      if (!resolved.ok) return resolved;
      return this.#replace('write', resolved.value, content, null);
    });
  }

  restore(input: string, version: number): Promise<FileOutcome<RestoreReport>> {
    return this.#exclusive(async () => {
      const resolved = await this.#writable(input);
      if (!resolved.ok) return resolved;
      const userPath = resolved.value;
      const versions = await this.fs.versions(userPath);
      const wanted = versions.find((item) => item.version === version);
      if (!wanted) return noSuchVersion(userPath, versions);
      if (wanted.current)
        return done({
          path: userPath,
          created: false,
          archivedVersion: null,
          version,
          restoredVersion: version,
        });
      const source = path.join(this.fs.archiveDir(userPath), versionFileName(userPath, version));
      const report = await this.#replace('restore', userPath, await readFile(source), version);
      return report.ok ? done({ ...report.value, restoredVersion: version }) : report;
    });
  }

  delete(input: string): Promise<FileOutcome<DeleteReport>> {
    return this.#exclusive(async () => {
      const resolved = await this.fs.resolve(input);
      if (!resolved.ok) return resolved;
      const userPath = resolved.value;
      const kind = await this.fs.kindOf(userPath);
      if (kind === null) return notFound(userPath);
      if (kind === 'folder')
        return failure(
          'not_a_file',
          `"${userPath}" is a folder: delete the files inside it one by one (each is archived)`,
        );
      const version = await this.fs.nextArchiveVersion(userPath);
      const entry = this.#entry('delete', userPath, { archiveName: versionFileName(userPath, version) });
      await this.#run(entry, async () => {
        await this.#step('delete', 'archive', userPath);
        await this.fs.moveInside(this.fs.abs(userPath), this.#archiveFile(userPath, entry.archiveName!));
        await this.#cleanEmptyFolders(parentOf(userPath));
      });
      return done({ path: userPath, archivedVersion: version });
    });
  }

  move(fromInput: string, toInput: string): Promise<FileOutcome<MoveReport>> {
    return this.#exclusive(async () => {
      const from = await this.fs.resolve(fromInput);
      if (!from.ok) return from;
      const fromKind = await this.fs.kindOf(from.value);
      if (fromKind === null) return notFound(from.value);
      const target = await this.fs.resolve(toInput);
      if (!target.ok) return target;
      let to = target.value;
      if (to !== from.value && (await this.fs.kindOf(to)) === 'folder') to = `${to}/${baseName(from.value)}`;
      if (to === from.value) return failure('exists', `"${from.value}" is already there`);
      if (isWithin(to, from.value))
        return failure('invalid_path', `cannot move the folder "${from.value}" into itself`);
      const toChecked = await this.#writable(to);
      if (!toChecked.ok) return toChecked;
      const toKind = await this.fs.kindOf(to);
      if (toKind === 'folder' || (toKind === 'file' && fromKind === 'folder'))
        return failure('exists', `"${to}" already exists: choose another destination`);
      const archiveVersion = toKind === 'file' ? await this.fs.nextArchiveVersion(to) : null;
      const moveHistory = toKind === null && !(await this.fs.exists(this.fs.archiveDir(to)));
      const entry = this.#entry('move', from.value, {
        target: to,
        archiveName: archiveVersion === null ? null : versionFileName(to, archiveVersion),
        details: { moveHistory },
      });
      await this.#run(entry, () => this.#moveSteps(entry));
      return done({ from: from.value, to, archivedVersion: archiveVersion, historyMoved: moveHistory });
    });
  }

  recover(): Promise<RecoveryReport> {
    return this.#exclusive(async (recovered) => recovered);
  }

  /** Steps of a move; recovery re-runs them, and each skips itself once its effect is there. */
  async #moveSteps(entry: JournalEntry): Promise<void> {
    const from = entry.path;
    const to = entry.target!;
    const sourceThere = async () => (await this.fs.kindOf(from)) !== null;
    await this.#step('move', 'archive-destination', from);
    if (entry.archiveName && (await sourceThere()) && (await this.fs.kindOf(to)) === 'file') {
      const archive = this.#archiveFile(to, entry.archiveName);
      if (!(await this.fs.exists(archive))) await this.fs.moveInside(this.fs.abs(to), archive);
    }
    await this.#step('move', 'move-history', from);
    if (entry.details.moveHistory === true && (await sourceThere())) {
      const history = this.fs.archiveDir(from);
      if ((await this.fs.exists(history)) && !(await this.fs.exists(this.fs.archiveDir(to))))
        await this.fs.moveInside(history, this.fs.archiveDir(to));
    }
    await this.#step('move', 'move', from);
    if ((await sourceThere()) && (await this.fs.kindOf(to)) === null) {
      await this.fs.moveInside(this.fs.abs(from), this.fs.abs(to));
      await this.#cleanEmptyFolders(parentOf(from));
    }
  }

  /** write and restore: stage the new content, archive the current version, then replace it. */
  async #replace(
    operation: 'write' | 'restore',
    userPath: string,
    content: Buffer,
    restoredVersion: number | null,
  ): Promise<FileOutcome<WriteReport>> {
    const existing = (await this.fs.kindOf(userPath)) === 'file';
    const archiveVersion = existing ? await this.fs.nextArchiveVersion(userPath) : null;
    const version = archiveVersion === null ? await this.fs.nextArchiveVersion(userPath) : archiveVersion + 1;
    const entry = this.#entry(operation, userPath, {
      archiveName: archiveVersion === null ? null : versionFileName(userPath, archiveVersion),
      contentHash: sha256(content),
      details: restoredVersion === null ? {} : { restoredVersion },
    });
    const staged = this.#stagingFile(entry.id);
    await this.#run(entry, async () => {
      await this.#step(operation, 'stage', userPath);
      await this.fs.writeDurably(`${staged}.part`, content);
      await this.#step(operation, 'stage-commit', userPath);
      await this.fs.moveInside(`${staged}.part`, staged);
      if (entry.archiveName) {
        await this.#step(operation, 'archive', userPath);
        await this.fs.moveInside(this.fs.abs(userPath), this.#archiveFile(userPath, entry.archiveName));
      }
      await this.#step(operation, 'replace', userPath);
      await this.fs.moveInside(staged, this.fs.abs(userPath));
    });
    return done({ path: userPath, created: !existing, archivedVersion: archiveVersion, version });
  }

  /** Journals `entry`, runs `body`, marks it completed. A step that throws leaves it to recovery. */
  async #run(entry: JournalEntry, body: () => Promise<void>): Promise<void> {
    await this.#step(entry.operation, 'journal', entry.path);
    await recordOperation(this.#database, entry);
    try {
      await body();
      await this.#step(entry.operation, 'finish', entry.path);
      await finishOperation(this.#database, entry.id, 'completed');
    } catch (error) {
      // Settle it now if the vault allows; otherwise the next start (or operation) does.
      const outcome = await recoverLocalOperation(this.#recoveryDeps(), entry).catch(() => null);
      if (outcome === 'completed') return;
      throw new StewardError(
        'file_operation_failed',
        `the ${entry.operation} of "${entry.path}" failed${outcome === 'rolled_back' ? ' and nothing changed' : '; it will be completed or rolled back on the next start'}: ${errorMessage(error)}`,
        { cause: error },
      );
    }
  }

  /** Settles what a crash left pending; an operation that cannot be settled is set aside, not retried. */
  async #recoverPending(): Promise<RecoveryReport> {
    const report: RecoveryReport = { completed: 0, rolledBack: 0, quarantined: 0 };
    for (const entry of await pendingOperations(this.#database, this.userId, 'local')) {
      let outcome: 'completed' | 'rolled_back';
      try {
        outcome = await recoverLocalOperation(this.#recoveryDeps(), entry);
      } catch (error) {
        const record = await quarantineOperation({
          database: this.#database,
          filesDir: this.#filesDir,
          vaultRoot: this.fs.root,
          entry,
          error: this.#hidePaths(errorMessage(error)),
        });
        report.quarantined++;
        this.#onQuarantine(record);
        continue;
      }
      if (outcome === 'completed') report.completed++;
      else report.rolledBack++;
    }
    return report;
  }

  #recoveryDeps() {
    return {
      database: this.#database,
      fs: this.fs,
      step: (operation: FileOperationName, step: string, userPath: string) =>
        this.#step(operation, step, userPath),
      stagingFile: (id: string) => this.#stagingFile(id),
      archiveFile: (userPath: string, name: string) => this.#archiveFile(userPath, name),
      moveSteps: (entry: JournalEntry) => this.#moveSteps(entry),
    };
  }

  /**
   * Serializes operations on this user's files, across processes too (advisory lock), after
   * the archive layout is checked and recovery ran. Errors leave with vault-relative paths.
   */
  #exclusive<T>(fn: (recovered: RecoveryReport) => Promise<T>): Promise<T> {
    return this.#hidingPaths(() =>
      vaultQueues.run(this.fs.root, () =>
        this.#database.withAdvisoryLock(`files:${this.userId}`, async () => {
          await ensureArchiveLayout(this.fs.root);
          preparedRoots.add(this.fs.root);
          return fn(await this.#recoverPending());
        }),
      ),
    );
  }

  /** Reads need the current archive layout too; the first one in a process checks it under the lock. */
  async #reading<T>(fn: () => Promise<T>): Promise<T> {
    if (!preparedRoots.has(this.fs.root)) await this.#exclusive(async () => undefined);
    return this.#hidingPaths(fn);
  }

  async #hidingPaths<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      const message = errorMessage(error);
      const hidden = this.#hidePaths(message);
      if (hidden === message) throw error;
      const code = error instanceof StewardError ? error.code : 'file_operation_failed';
      throw new StewardError(code, hidden, { cause: error });
    }
  }

  /** A message with the vault's own path made relative, and the server's folders left out. */
  #hidePaths(message: string): string {
    let hidden = message;
    for (const root of [this.fs.root, this.fs.realRoot].filter((item): item is string => item !== null)) {
      hidden = hidden.replaceAll(`${root}${path.sep}`, '').replaceAll(root, '.');
    }
    return hidden.replaceAll(`${this.#filesDir}${path.sep}`, '').replaceAll(this.#filesDir, '<files>');
  }

  /** A path that can receive a file: no folder there, and no file where a folder is needed. */
  async #writable(input: string): Promise<FileOutcome<string>> {
    const resolved = await this.fs.resolve(input);
    if (!resolved.ok) return resolved;
    const userPath = resolved.value;
    if ((await this.fs.kindOf(userPath)) === 'folder')
      return failure('not_a_file', `"${userPath}" is a folder: give a file name inside it`);
    for (let parent = parentOf(userPath); parent !== ''; parent = parentOf(parent)) {
      if ((await this.fs.kindOf(parent)) === 'file')
        return failure('not_a_folder', `"${parent}" is a file, so "${userPath}" cannot be created inside it`);
    }
    return resolved;
  }

  async #cleanEmptyFolders(dir: string): Promise<void> {
    // Folders emptied by a delete or move go too; rmdir refuses a folder that still holds anything.
    for (let folder = dir; folder !== ''; folder = parentOf(folder)) {
      try {
        await rmdir(this.fs.abs(folder));
      } catch {
        return;
      }
    }
  }

  #entry(
    operation: FileOperationName,
    userPath: string,
    extra: Partial<Pick<JournalEntry, 'target' | 'archiveName' | 'contentHash' | 'details'>>,
  ): JournalEntry {
    return {
      id: this.#randomId(),
      userId: this.userId,
      store: 'local',
      operation,
      path: userPath,
      target: extra.target ?? null,
      archiveName: extra.archiveName ?? null,
      contentHash: extra.contentHash ?? null,
      details: extra.details ?? {},
      status: 'pending',
      createdAt: new Date(),
    };
  }

  #stagingFile(id: string): string {
    return path.join(this.fs.root, STAGING_DIR, id);
  }

  #archiveFile(userPath: string, name: string): string {
    return path.join(this.fs.archiveDir(userPath), name);
  }

  async #step(operation: FileOperationName, step: string, userPath: string): Promise<void> {
    await this.#onStep({ operation, step, path: userPath });
  }
}

const notFound = (userPath: string) =>
  failure('not_found', `there is no file "${userPath}": list the folder with files.list`);

function noSuchVersion(userPath: string, versions: FileVersion[]) {
  if (versions.length === 0) return notFound(userPath);
  return failure(
    'not_found',
    `"${userPath}" has no such version: its versions are v1 to v${versions.at(-1)!.version} (see files.versions)`,
  );
}
