import { randomUUID } from 'node:crypto';
import { type Database, KeyedQueue } from '../db/index.ts';
import { type DriveClient, type DriveFile, FOLDER_MIME, GOOGLE_DOC_MIME } from './drive-client.ts';
import { driveName, exportFormat, isNative, mimeFor } from './drive-formats.ts';
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
import { sha256 } from './vault-fs.ts';
import { ARCHIVE_DIR, baseName, isWithin, normalizeUserPath, parentOf } from './vault-path.ts';

export type DriveFileStoreOptions = {
  client: DriveClient;
  /** The Drive folder that is this user's root. */
  folderId: string;
  database: Database;
  userId: string;
  onStep?: StepHook;
  randomId?: () => string;
  now?: () => Date;
};

/** One version of a path in Drive: a revision of a binary file, or a whole Google document. */
type VersionSource = { file: DriveFile; revisionId: string | null; version: FileVersion };

const queues = new KeyedQueue();

/**
 * A FileStore over a Drive folder. Versions are Drive's own revisions; before a binary file
 * gets a new revision its head revision is marked keep-forever (Drive purges the others), and
 * a Google document is copied into the hidden `.archive` folder. Deleting moves the file into
 * `.archive`, tagged with the path it had, so the path's history lists it first.
 */
export class DriveFileStore implements FileStore {
  readonly kind = 'drive' as const;
  readonly #client: DriveClient;
  readonly #rootId: string;
  readonly #database: Database;
  readonly #userId: string;
  readonly #onStep: StepHook;
  readonly #randomId: () => string;
  readonly #now: () => Date;
  #archiveId: string | null = null;

  constructor(options: DriveFileStoreOptions) {
    this.#client = options.client;
    this.#rootId = options.folderId;
    this.#database = options.database;
    this.#userId = options.userId;
    this.#onStep = options.onStep ?? (() => undefined);
    this.#randomId = options.randomId ?? (() => randomUUID());
    this.#now = options.now ?? (() => new Date());
  }

  /** The live file or folder at a path, by name from the root (the first match when Drive holds duplicates). */
  async fileAt(userPath: string): Promise<DriveFile | null> {
    let current: DriveFile | null = null;
    let parentId = this.#rootId;
    for (const segment of userPath === '' ? [] : userPath.split('/')) {
      const children = await this.#client.children(parentId);
      current = children.find((child) => driveName(child) === segment) ?? null;
      if (!current) return null;
      parentId = current.id;
    }
    return current;
  }

  /** Every live file below the root with its path (sync's view of the folder). */
  async walk(signal?: AbortSignal): Promise<Array<{ path: string; file: DriveFile }>> {
    const found: Array<{ path: string; file: DriveFile }> = [];
    const pending: Array<{ id: string; path: string }> = [{ id: this.#rootId, path: '' }];
    while (pending.length > 0) {
      const folder = pending.pop()!;
      for (const child of await this.#client.children(folder.id, signal)) {
        const name = driveName(child);
        // A Drive name may hold "/", which a path cannot: such files stay in Drive, untouched.
        if ((folder.path === '' && name === ARCHIVE_DIR) || name.includes('/')) continue;
        const childPath = folder.path === '' ? name : `${folder.path}/${name}`;
        if (child.mimeType === FOLDER_MIME) pending.push({ id: child.id, path: childPath });
        else found.push({ path: childPath, file: child });
      }
    }
    return found;
  }

  async list(dir: string): Promise<FileOutcome<FileEntry[]>> {
    const checked = check(dir, true);
    if (!checked.ok) return checked;
    const folder = checked.value === '' ? null : await this.fileAt(checked.value);
    if (checked.value !== '' && !folder) return failure('not_found', `there is no folder "${checked.value}"`);
    if (folder && folder.mimeType !== FOLDER_MIME)
      return failure('not_a_folder', `"${checked.value}" is a file: read it with files.read`);
    const children = await this.#client.children(folder?.id ?? this.#rootId);
    const entries = children
      .filter((child) => !(checked.value === '' && driveName(child) === ARCHIVE_DIR))
      .map((child) =>
        toEntry(checked.value === '' ? driveName(child) : `${checked.value}/${driveName(child)}`, child),
      );
    return done(
      entries.sort((a, b) =>
        a.kind === b.kind ? a.path.localeCompare(b.path) : a.kind === 'folder' ? -1 : 1,
      ),
    );
  }

  async stat(input: string): Promise<FileOutcome<FileEntry>> {
    const checked = check(input);
    if (!checked.ok) return checked;
    const file = await this.fileAt(checked.value);
    return file ? done(toEntry(checked.value, file)) : notFound(checked.value);
  }

  async read(input: string): Promise<FileOutcome<Buffer>> {
    const checked = check(input);
    if (!checked.ok) return checked;
    const file = await this.fileAt(checked.value);
    if (!file) return notFound(checked.value);
    if (file.mimeType === FOLDER_MIME)
      return failure('not_a_file', `"${checked.value}" is a folder: list it with files.list`);
    return done(await this.#content(file, null));
  }

  async versions(input: string): Promise<FileOutcome<FileVersion[]>> {
    const checked = check(input);
    if (!checked.ok) return checked;
    const sources = await this.#versionSources(checked.value);
    return sources.length > 0 ? done(sources.map((source) => source.version)) : notFound(checked.value);
  }

  async readVersion(input: string, version: number): Promise<FileOutcome<Buffer>> {
    const checked = check(input);
    if (!checked.ok) return checked;
    const sources = await this.#versionSources(checked.value);
    const source = sources.find((item) => item.version.version === version);
    if (!source) return noSuchVersion(checked.value, sources.length);
    return done(await this.#content(source.file, source.version.current ? null : source.revisionId));
  }

  write(input: string, content: Buffer): Promise<FileOutcome<WriteReport>> {
    return this.#exclusive(async () => {
      const checked = await this.#writable(input);
      if (!checked.ok) return checked;
      return this.#replace('write', checked.value, content);
    });
  }

  restore(input: string, version: number): Promise<FileOutcome<RestoreReport>> {
    return this.#exclusive(async () => {
      const checked = await this.#writable(input);
      if (!checked.ok) return checked;
      const sources = await this.#versionSources(checked.value);
      const source = sources.find((item) => item.version.version === version);
      if (!source) return noSuchVersion(checked.value, sources.length);
      if (source.version.current)
        return done({
          path: checked.value,
          created: false,
          archivedVersion: null,
          version,
          restoredVersion: version,
        });
      const content = await this.#content(source.file, source.revisionId);
      const report = await this.#replace('restore', checked.value, content);
      return report.ok ? done({ ...report.value, restoredVersion: version }) : report;
    });
  }

  delete(input: string): Promise<FileOutcome<DeleteReport>> {
    return this.#exclusive(async () => {
      const checked = check(input);
      if (!checked.ok) return checked;
      const userPath = checked.value;
      const file = await this.fileAt(userPath);
      if (!file) return notFound(userPath);
      if (file.mimeType === FOLDER_MIME)
        return failure('not_a_file', `"${userPath}" is a folder: delete the files inside it one by one`);
      const archivedVersion = (await this.#versionSources(userPath)).length;
      await this.#run(this.#entry('delete', userPath, {}), async () => {
        await this.#step('delete', 'archive', userPath);
        await this.#archive(file, userPath);
      });
      return done({ path: userPath, archivedVersion });
    });
  }

  move(fromInput: string, toInput: string): Promise<FileOutcome<MoveReport>> {
    return this.#exclusive(async () => {
      const from = check(fromInput);
      if (!from.ok) return from;
      const source = await this.fileAt(from.value);
      if (!source) return notFound(from.value);
      const target = check(toInput);
      if (!target.ok) return target;
      let to = target.value;
      const landing = await this.fileAt(to);
      if (to !== from.value && landing?.mimeType === FOLDER_MIME) to = `${to}/${baseName(from.value)}`;
      if (to === from.value) return failure('exists', `"${from.value}" is already there`);
      if (isWithin(to, from.value))
        return failure('invalid_path', `cannot move the folder "${from.value}" into itself`);
      const writable = await this.#writable(to);
      if (!writable.ok) return writable;
      const existing = await this.fileAt(to);
      if (existing && (existing.mimeType === FOLDER_MIME || source.mimeType === FOLDER_MIME))
        return failure('exists', `"${to}" already exists: choose another destination`);
      const archivedVersion = existing ? (await this.#versionSources(to)).length : null;
      await this.#run(this.#entry('move', from.value, { target: to }), async () => {
        await this.#step('move', 'archive-destination', from.value);
        if (existing) await this.#archive(existing, to);
        await this.#step('move', 'move', from.value);
        await this.#moveFile(source, to);
      });
      return done({ from: from.value, to, archivedVersion, historyMoved: true });
    });
  }

  recover(): Promise<RecoveryReport> {
    return this.#exclusive(() => this.#recoverPending());
  }

  /** write and restore: archive the current version (keep its revision, or copy a document), then upload. */
  async #replace(
    operation: 'write' | 'restore',
    userPath: string,
    content: Buffer,
  ): Promise<FileOutcome<WriteReport>> {
    const existing = await this.fileAt(userPath);
    if (existing && isNative(existing.mimeType) && existing.mimeType !== GOOGLE_DOC_MIME)
      return failure(
        'unsupported',
        `"${userPath}" is a Google ${existing.mimeType.includes('spreadsheet') ? 'Sheet' : 'file'} exported as text; edit it in Drive`,
      );
    const count = (await this.#versionSources(userPath)).length;
    const entry = this.#entry(operation, userPath, { contentHash: sha256(content) });
    await this.#run(entry, async () => {
      if (!existing) {
        await this.#step(operation, 'create', userPath);
        const parentId = await this.#ensureFolder(parentOf(userPath));
        await this.#client.create({ name: baseName(userPath), parentId }, content, mimeFor(userPath));
        return;
      }
      await this.#step(operation, 'archive', userPath);
      if (isNative(existing.mimeType)) await this.#archiveCopy(existing, userPath);
      else if (existing.headRevisionId) await this.#client.keepRevision(existing.id, existing.headRevisionId);
      await this.#step(operation, 'replace', userPath);
      await this.#client.upload(
        existing.id,
        content,
        isNative(existing.mimeType) ? 'text/markdown' : mimeFor(userPath),
      );
    });
    // A Google document's archive copy is one more version before the current one.
    return done({
      path: userPath,
      created: !existing,
      archivedVersion: existing ? count : null,
      version: existing ? count + 1 : count + 1,
    });
  }

  /** The versions of a path: archived incarnations first (oldest first), then the live file. */
  async #versionSources(userPath: string): Promise<VersionSource[]> {
    const archived = (await this.#client.children(await this.#archiveFolder()))
      .filter((file) => file.appProperties.stewardPath === userPath)
      .sort((a, b) =>
        (a.appProperties.stewardArchivedAt ?? '').localeCompare(b.appProperties.stewardArchivedAt ?? ''),
      );
    const live = await this.fileAt(userPath);
    const files = live && live.mimeType !== FOLDER_MIME ? [...archived, live] : archived;
    const sources: VersionSource[] = [];
    for (const file of files) {
      const current = file === live;
      if (isNative(file.mimeType)) {
        sources.push({
          file,
          revisionId: null,
          version: version(sources.length, file.size, file.modifiedTime, current),
        });
        continue;
      }
      const revisions = await this.#client.revisions(file.id);
      revisions.forEach((revision, index) => {
        const head = current && index === revisions.length - 1;
        sources.push({
          file,
          revisionId: revision.id,
          version: version(sources.length, revision.size, revision.modifiedTime, head),
        });
      });
    }
    return sources;
  }

  async #content(file: DriveFile, revisionId: string | null): Promise<Buffer> {
    if (isNative(file.mimeType)) return this.#client.export(file.id, exportFormat(file.mimeType)!.mimeType);
    return revisionId ? this.#client.downloadRevision(file.id, revisionId) : this.#client.download(file.id);
  }

  /** Moves a live file into `.archive`, tagged with its path, so it lists as that path's history. */
  async #archive(file: DriveFile, userPath: string): Promise<void> {
    await this.#client.update(file.id, {
      addParents: await this.#archiveFolder(),
      removeParents: file.parents.join(','),
      appProperties: { stewardPath: userPath, stewardArchivedAt: this.#now().toISOString() },
    });
  }

  async #archiveCopy(file: DriveFile, userPath: string): Promise<void> {
    await this.#client.copy(file.id, file.name, await this.#archiveFolder(), {
      stewardPath: userPath,
      stewardArchivedAt: this.#now().toISOString(),
    });
  }

  async #moveFile(file: DriveFile, to: string): Promise<void> {
    const parentId = await this.#ensureFolder(parentOf(to));
    const name = baseName(to);
    await this.#client.update(file.id, {
      ...(name !== driveName(file) ? { name } : {}),
      ...(file.parents.includes(parentId)
        ? {}
        : { addParents: parentId, removeParents: file.parents.join(',') }),
    });
  }

  async #archiveFolder(): Promise<string> {
    this.#archiveId ??= await this.#ensureFolder(ARCHIVE_DIR);
    return this.#archiveId;
  }

  async #ensureFolder(folderPath: string): Promise<string> {
    let parentId = this.#rootId;
    for (const segment of folderPath === '' ? [] : folderPath.split('/')) {
      const children = await this.#client.children(parentId);
      const found = children.find((child) => child.name === segment && child.mimeType === FOLDER_MIME);
      parentId = found ? found.id : (await this.#client.createFolder(segment, parentId)).id;
    }
    return parentId;
  }

  async #writable(input: string): Promise<FileOutcome<string>> {
    const checked = check(input);
    if (!checked.ok) return checked;
    const file = await this.fileAt(checked.value);
    if (file?.mimeType === FOLDER_MIME)
      return failure('not_a_file', `"${checked.value}" is a folder: give a file name inside it`);
    for (let parent = parentOf(checked.value); parent !== ''; parent = parentOf(parent)) {
      const folder = await this.fileAt(parent);
      if (folder && folder.mimeType !== FOLDER_MIME)
        return failure(
          'not_a_folder',
          `"${parent}" is a file, so "${checked.value}" cannot be created inside it`,
        );
    }
    return checked;
  }

  async #run(entry: JournalEntry, body: () => Promise<void>): Promise<void> {
    await this.#step(entry.operation, 'journal', entry.path);
    await recordOperation(this.#database, entry);
    await body();
    await this.#step(entry.operation, 'finish', entry.path);
    await finishOperation(this.#database, entry.id, 'completed');
  }

  /**
   * Each step is one Drive call, so an interrupted operation either reached Drive or did
   * not: recovery looks at what Drive holds and finishes an interrupted move.
   */
  async #recoverPending(): Promise<RecoveryReport> {
    const report: RecoveryReport = { completed: 0, rolledBack: 0, quarantined: 0 };
    for (const entry of await pendingOperations(this.#database, this.#userId, 'drive')) {
      let completed: boolean;
      const live = await this.fileAt(entry.path);
      if (entry.operation === 'delete') completed = live === null;
      else if (entry.operation === 'move') {
        const target = await this.fileAt(entry.target!);
        if (live && !target) {
          await this.#step('move', 'recover-move', entry.path);
          await this.#moveFile(live, entry.target!);
        }
        completed = live === null || target === null;
      } else completed = live !== null && sha256(await this.#content(live, null)) === entry.contentHash;
      await this.#step(entry.operation, 'recover-finish', entry.path);
      await finishOperation(this.#database, entry.id, completed ? 'completed' : 'rolled_back');
      if (completed) report.completed++;
      else report.rolledBack++;
    }
    return report;
  }

  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return queues.run(`${this.#userId}:${this.#rootId}`, () =>
      this.#database.withAdvisoryLock(`files-drive:${this.#userId}`, async () => {
        await this.#recoverPending();
        return fn();
      }),
    );
  }

  #entry(
    operation: FileOperationName,
    userPath: string,
    extra: { target?: string; contentHash?: string },
  ): JournalEntry {
    return {
      id: this.#randomId(),
      userId: this.#userId,
      store: 'drive',
      operation,
      path: userPath,
      target: extra.target ?? null,
      archiveName: null,
      contentHash: extra.contentHash ?? null,
      details: { folderId: this.#rootId },
      status: 'pending',
      createdAt: this.#now(),
    };
  }

  async #step(operation: FileOperationName, step: string, userPath: string): Promise<void> {
    await this.#onStep({ operation, step, path: userPath });
  }
}

function check(input: string, allowRoot = false): FileOutcome<string> {
  const checked = normalizeUserPath(input, { allowRoot });
  return checked.ok ? done(checked.path) : failure('invalid_path', checked.message);
}

const version = (index: number, size: number, savedAt: string, current: boolean): FileVersion => ({
  version: index + 1,
  size,
  savedAt: new Date(savedAt),
  current,
});

function toEntry(userPath: string, file: DriveFile): FileEntry {
  const folder = file.mimeType === FOLDER_MIME;
  return {
    path: userPath,
    kind: folder ? 'folder' : 'file',
    size: folder ? 0 : file.size,
    modifiedAt: new Date(file.modifiedTime),
  };
}

const notFound = (userPath: string) =>
  failure('not_found', `there is no file "${userPath}" in the Drive folder: list it with files.list`);

const noSuchVersion = (userPath: string, count: number) =>
  count === 0
    ? notFound(userPath)
    : failure(
        'not_found',
        `"${userPath}" has no such version: its versions are v1 to v${count} (see files.versions)`,
      );
