import type { Queryable } from '../db/index.ts';

/** What a file looked like on both sides when it was last synced. */
export type SyncedFile = {
  path: string;
  driveFileId: string;
  mimeType: string;
  remoteVersion: string;
  localHash: string;
  conflictPath: string | null;
};

type SyncedRow = {
  path: string;
  drive_file_id: string;
  mime_type: string;
  remote_version: string;
  local_hash: string;
  conflict_path: string | null;
};

export async function syncedFiles(db: Queryable, userId: string): Promise<Map<string, SyncedFile>> {
  const rows = await db.query<SyncedRow>('SELECT * FROM drive_sync_files WHERE user_id = $1', [userId]);
  return new Map(
    rows.map((row) => [
      row.path,
      {
        path: row.path,
        driveFileId: row.drive_file_id,
        mimeType: row.mime_type,
        remoteVersion: row.remote_version,
        localHash: row.local_hash,
        conflictPath: row.conflict_path,
      },
    ]),
  );
}

export async function saveSyncedFile(db: Queryable, userId: string, file: SyncedFile): Promise<void> {
  // A Drive file that was renamed elsewhere may still hold its old path's row.
  await db.query('DELETE FROM drive_sync_files WHERE user_id = $1 AND drive_file_id = $2 AND path <> $3', [
    userId,
    file.driveFileId,
    file.path,
  ]);
  await db.query(
    `INSERT INTO drive_sync_files (user_id, path, drive_file_id, mime_type, remote_version, local_hash, conflict_path)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (user_id, path) DO UPDATE SET drive_file_id = EXCLUDED.drive_file_id, mime_type = EXCLUDED.mime_type,
       remote_version = EXCLUDED.remote_version, local_hash = EXCLUDED.local_hash,
       conflict_path = EXCLUDED.conflict_path, synced_at = now()`,
    [
      userId,
      file.path,
      file.driveFileId,
      file.mimeType,
      file.remoteVersion,
      file.localHash,
      file.conflictPath,
    ],
  );
}

/** Forgets a path that no longer exists on either side (the files themselves are archived, not here). */
export async function forgetSyncedFile(db: Queryable, userId: string, path: string): Promise<void> {
  await db.query('DELETE FROM drive_sync_files WHERE user_id = $1 AND path = $2', [userId, path]);
}
