export { ensureArchiveLayout, type LayoutStepHook } from './archive-layout.ts';
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
export { QUARANTINE_DIR, type QuarantineRecord, quarantinedOperations } from './quarantine.ts';
export { userVaultDir } from './user-vault-dir.ts';
export { SCAN_LIMITS, type ScanLimits, sha256, VaultFs, type VaultScan } from './vault-fs.ts';
export { prepareVaults, type VaultPreparation } from './vault-layout.ts';
export {
  ARCHIVE_DIR,
  displayPath,
  normalizeUserPath,
  STAGING_DIR,
  withoutUnsafeCharacters,
} from './vault-path.ts';
export { type VaultWatcher, WATCH_DEPTH, watchVaults } from './vault-watcher.ts';
