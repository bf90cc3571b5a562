export {
  type IndexReport,
  indexSkillPages,
  indexVault,
  SHARED_OWNER,
  type SkillPage,
} from './content-index.ts';
export { type ContentMatch, type ContentScope, indexedCount, searchContent } from './content-search.ts';
export {
  DriveClient,
  type DriveConnection,
  type DriveConnector,
  DriveError,
  type DriveFile,
} from './drive-client.ts';
export { DriveFileStore, type DriveFileStoreOptions } from './drive-file-store.ts';
export { conflictName, type SyncReport, syncWithDrive } from './drive-sync.ts';
export { documentKind, type ExtractedText, extractText } from './extract-text.ts';
export type {
  DeleteReport,
  FileEntry,
  FileFailure,
  FileFailureCode,
  FileOperationName,
  FileOutcome,
  FileStore,
  FileVersion,
  MoveReport,
  RecoveryReport,
  RestoreReport,
  StepHook,
  WriteReport,
} from './file-store.ts';
export {
  FilesService,
  type FilesServiceOptions,
  type FilesSettings,
} from './files-service.ts';
export {
  enqueueIndex,
  FILES_INDEX_JOB,
  FILES_RECONCILE_JOB,
  registerFileJobs,
  SKILLS_INDEX_JOB,
} from './index-jobs.ts';
export { type JournalEntry, operationHistory, usersWithPendingOperations } from './journal.ts';
export { LocalVault, type LocalVaultOptions, withVaultLock } from './local-vault.ts';
export { userVaultDir } from './user-vault-dir.ts';
export { sha256, VaultFs } from './vault-fs.ts';
export { ARCHIVE_DIR, normalizeUserPath, STAGING_DIR } from './vault-path.ts';
export { type VaultWatcher, watchVaults } from './vault-watcher.ts';
