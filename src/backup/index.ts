export { type DataRoutesDeps, dataRoutes } from './api-routes.ts';
export { extractArchive } from './archive-reader.ts';
export { type BackupSources, type BackupSummary, backupsDir, filesRoot, writeBackup } from './backup.ts';
export {
  type BackupReason,
  backupFileName,
  backupStamp,
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
export { type ExportReport, exportUser } from './export-user.ts';
export { type ForgetReport, forgetUser, OWNER_USER } from './forget-user.ts';
export { type BackupManifest, manifestSchema } from './manifest.ts';
export { type OwnedSkill, ownedSkills } from './owned-skills.ts';
export { packFolder } from './pack-folder.ts';
export { dropStewardObjects, type RestoreReport, type RestoreTarget, restoreBackup } from './restore.ts';
export { stewardVersion } from './steward-version.ts';
export { type Catalog, type CatalogTable, readCatalog } from './table-catalog.ts';
export { backupBeforeMigrations, type UpgradeBackupOptions } from './upgrade-backup.ts';
export { SHARED_TABLES, type UserDataPlan, userDataPlan } from './user-data-plan.ts';
