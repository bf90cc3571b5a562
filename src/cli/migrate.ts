import type { ResolvedConfig } from '../config/index.ts';
import { migrate, openDatabase } from '../db/index.ts';

export async function migrateCommand(config: ResolvedConfig): Promise<void> {
  const { database, lock } = await openDatabase(config, { migrate: false });
  try {
    const applied = await migrate(database);
    process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
  } finally {
    await database.close();
    lock?.release();
  }
}
