import { backupBeforeMigrations } from '../backup/index.ts';
import type { ResolvedConfig } from '../config/index.ts';
import { migrate, openDatabase } from '../db/index.ts';

/** `steward migrate`: applies pending migrations, after a backup into `<data dir>/backups` it names. */
export async function migrateCommand(config: ResolvedConfig): Promise<void> {
  const { database, lock } = await openDatabase(config, { migrate: false });
  try {
    const beforeApply = backupBeforeMigrations({
      dataDir: config.dataDir,
      skillsDir: config.skillsDir,
      keep: config.backup.keep,
      report: (line) => process.stdout.write(`${line}\n`),
    })(database);
    const applied = await migrate(database, undefined, { beforeApply });
    process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
  } finally {
    await database.close();
    lock?.release();
  }
}
