/** A file or folder as a listing shows it; `path` is relative to the user's root. */
export type FileEntry = {
  path: string;
  kind: 'file' | 'folder';
  size: number;
  modifiedAt: Date;
};

/** One version of a path: 1 is the oldest; the last is current unless the file was deleted. */
export type FileVersion = {
  version: number;
  size: number;
  savedAt: Date;
  current: boolean;
};

export type FileFailureCode =
  | 'invalid_path'
  | 'not_found'
  | 'not_a_file'
  | 'not_a_folder'
  | 'exists'
  | 'unsupported'
  | 'interrupted'
  | 'provider_error';

export type FileFailure = { ok: false; code: FileFailureCode; message: string };
export type FileOutcome<T> = { ok: true; value: T } | FileFailure;

export const done = <T>(value: T): FileOutcome<T> => ({ ok: true, value });
export const failure = (code: FileFailureCode, message: string): FileFailure => ({
  ok: false,
  code,
  message,
});

export type WriteReport = {
  path: string;
  created: boolean;
  /** The version number the previous content was archived under (null for a new file). */
  archivedVersion: number | null;
  /** The version number of the content now at `path`. */
  version: number;
};

export type DeleteReport = { path: string; archivedVersion: number };

export type MoveReport = {
  from: string;
  to: string;
  /** An existing file at `to` was archived under this version of `to` first. */
  archivedVersion: number | null;
  /** Whether the earlier versions of `from` now list under `to`. */
  historyMoved: boolean;
};

export type RestoreReport = WriteReport & { restoredVersion: number };

/** `quarantined`: operations recovery could not settle, set aside (and reported) instead. */
export type RecoveryReport = { completed: number; rolledBack: number; quarantined: number };

export type FileOperationName = 'write' | 'delete' | 'move' | 'restore';

/**
 * Called before each step of every mutating operation (and of its recovery). Production
 * passes none; tests throw from it to crash an operation between two steps.
 */
export type StepHook = (step: {
  operation: FileOperationName;
  step: string;
  path: string;
}) => void | Promise<void>;

/**
 * One user's files. Paths are relative to the user's root; anything that would leave it is
 * refused as `invalid_path`. Nothing is ever removed: `delete` archives, and `write`,
 * `move` onto an existing file and `restore` archive the version they replace before they
 * replace it. Expected failures are values; exceptions mean the storage itself failed, and
 * an operation that threw is completed or rolled back by `recover()`.
 */
export interface FileStore {
  readonly kind: 'local' | 'drive';
  /** The entries directly inside `dir` (`''` is the root), folders first, then by name. */
  list(dir: string, signal?: AbortSignal): Promise<FileOutcome<FileEntry[]>>;
  stat(path: string, signal?: AbortSignal): Promise<FileOutcome<FileEntry>>;
  read(path: string, signal?: AbortSignal): Promise<FileOutcome<Buffer>>;
  /** Creates `path` (and its folders) or replaces it, archiving the previous version first. */
  write(path: string, content: Buffer, signal?: AbortSignal): Promise<FileOutcome<WriteReport>>;
  /** Moves a file or folder; an existing file at `to` is archived first. */
  move(from: string, to: string, signal?: AbortSignal): Promise<FileOutcome<MoveReport>>;
  /** Archives the file: it leaves listings, and its versions stay restorable. */
  delete(path: string, signal?: AbortSignal): Promise<FileOutcome<DeleteReport>>;
  /** Every version of `path`, oldest first, numbered from 1. */
  versions(path: string, signal?: AbortSignal): Promise<FileOutcome<FileVersion[]>>;
  readVersion(path: string, version: number, signal?: AbortSignal): Promise<FileOutcome<Buffer>>;
  /** Makes version `version` current again; the current content is archived first. */
  restore(path: string, version: number, signal?: AbortSignal): Promise<FileOutcome<RestoreReport>>;
  /** Completes or rolls back every operation of this store left unfinished by a crash. */
  recover(signal?: AbortSignal): Promise<RecoveryReport>;
}
