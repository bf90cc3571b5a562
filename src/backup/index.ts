export { extractArchive } from './archive-reader.ts';
export { type BackupSources, type BackupSummary, backupsDir, filesRoot, writeBackup } from './backup.ts';
export {
  type BackupReason,
  backupFileName,
  listBackups,
  pruneBackups,
  type StoredBackup,
  writeBackupFile,
  writeKeptBackup,
} from './backup-files.ts';
export {
  BACKUP_JOB,
  type BackupAge,
  type BackupSettings,
  backupAge,
  registerBackupJobs,
} from './backup-schedule.ts';
export { type DatabaseDump, dumpDatabase } from './dump-database.ts';
export { type BackupManifest, manifestSchema } from './manifest.ts';
export { type RestoreReport, type RestoreTarget, restoreBackup } from './restore.ts';
export { stewardVersion } from './steward-version.ts';
export { type Catalog, type CatalogTable, readCatalog } from './table-catalog.ts';
export { backupBeforeMigrations, type UpgradeBackupOptions } from './upgrade-backup.ts';
