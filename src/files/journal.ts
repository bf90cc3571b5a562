import type { Queryable } from '../db/index.ts';
import type { FileOperationName } from './file-store.ts';

/** A file operation as the journal records it before the operation touches anything. */
export type JournalEntry = {
  id: string;
  userId: string;
  store: 'local' | 'drive';
  operation: FileOperationName;
  path: string;
  target: string | null;
  archiveName: string | null;
  contentHash: string | null;
  details: Record<string, unknown>;
  /** `quarantined`: recovery could neither complete nor undo it; set aside (see quarantine.ts). */
  status: 'pending' | 'completed' | 'rolled_back' | 'quarantined';
  createdAt: Date;
};

type JournalRow = {
  id: string;
  user_id: string;
  store: 'local' | 'drive';
  operation: FileOperationName;
  path: string;
  target: string | null;
  archive_name: string | null;
  content_hash: string | null;
  details: Record<string, unknown> | null;
  status: JournalEntry['status'];
  created_at: Date;
};

const toEntry = (row: JournalRow): JournalEntry => ({
  id: row.id,
  userId: row.user_id,
  store: row.store,
  operation: row.operation,
  path: row.path,
  target: row.target,
  archiveName: row.archive_name,
  contentHash: row.content_hash,
  details: row.details ?? {},
  status: row.status,
  createdAt: new Date(row.created_at),
});

export type NewJournalEntry = Omit<JournalEntry, 'status' | 'createdAt' | 'details'> & {
  details?: Record<string, unknown>;
};

export async function recordOperation(db: Queryable, entry: NewJournalEntry): Promise<void> {
  await db.query(
    `INSERT INTO file_operations (id, user_id, store, operation, path, target, archive_name, content_hash, details)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      entry.id,
      entry.userId,
      entry.store,
      entry.operation,
      entry.path,
      entry.target,
      entry.archiveName,
      entry.contentHash,
      JSON.stringify(entry.details ?? {}),
    ],
  );
}

export async function finishOperation(
  db: Queryable,
  id: string,
  status: 'completed' | 'rolled_back',
  error: string | null = null,
): Promise<void> {
  await db.query(
    `UPDATE file_operations SET status = $2, error = $3, finished_at = now() WHERE id = $1 AND status = 'pending'`,
    [id, status, error],
  );
}

/** Takes an operation out of recovery for good: it is never replayed again. */
export async function quarantineJournalEntry(db: Queryable, id: string, error: string): Promise<void> {
  await db.query(
    `UPDATE file_operations SET status = 'quarantined', error = $2, finished_at = now() WHERE id = $1 AND status = 'pending'`,
    [id, error],
  );
}

/** Operations of one user's store left pending, oldest first. */
export async function pendingOperations(
  db: Queryable,
  userId: string,
  store: 'local' | 'drive',
): Promise<JournalEntry[]> {
  const rows = await db.query<JournalRow>(
    `SELECT * FROM file_operations WHERE user_id = $1 AND store = $2 AND status = 'pending' ORDER BY created_at, id`,
    [userId, store],
  );
  return rows.map(toEntry);
}

/** Users with operations left pending in a store (recovery at start-up). */
export async function usersWithPendingOperations(db: Queryable, store: 'local' | 'drive'): Promise<string[]> {
  const rows = await db.query<{ user_id: string }>(
    `SELECT DISTINCT user_id FROM file_operations WHERE store = $1 AND status = 'pending'`,
    [store],
  );
  return rows.map((row) => row.user_id);
}

/** Every journal row of a user (tests and diagnostics), newest first. */
export async function operationHistory(db: Queryable, userId: string, limit = 50): Promise<JournalEntry[]> {
  const rows = await db.query<JournalRow>(
    'SELECT * FROM file_operations WHERE user_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2',
    [userId, limit],
  );
  return rows.map(toEntry);
}
