import type { Database, MigrateOptions } from '../db/index.ts';
import { errorMessage, StewardError } from '../errors.ts';
import { writeKeptBackup } from './backup-files.ts';
import { stewardVersion } from './steward-version.ts';

export type UpgradeBackupOptions = {
  dataDir: string;
  skillsDir: string;
  /** How many backups `<data dir>/backups` keeps (`backup.keep`). */
  keep: number;
  /** Told where the backup is, in one line (the terminal, the log). */
  report: (line: string, file: string) => void;
};

/**
 * The step `migrate` runs before it applies pending migrations to a database that has data: a
 * backup into `<data dir>/backups` (pruned by `backup.keep`), whose path a failed migration's
 * message then names. A backup that fails stops the upgrade before anything changed.
 */
export function backupBeforeMigrations(
  options: UpgradeBackupOptions,
): (database: Database) => NonNullable<MigrateOptions['beforeApply']> {
  return (database) => async (pending) => {
    try {
      const { file } = await writeKeptBackup(
        {
          database,
          dataDir: options.dataDir,
          skillsDir: options.skillsDir,
          stewardVersion: stewardVersion(),
        },
        'pre-migrate',
        options.keep,
      );
      options.report(
        `Backed up the database before applying ${pending.length} migration(s) (${pending.join(', ')}): ${file}`,
        file,
      );
      return { backup: file };
    } catch (error) {
      throw new StewardError(
        'upgrade_backup_failed',
        `Could not back up the database before migrating (${errorMessage(error)}); no migration was applied. Fix that (free space in ${options.dataDir}/backups?), then start again.`,
        { cause: error },
      );
    }
  };
}
