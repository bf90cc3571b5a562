import type { Queryable } from '../db/index.ts';

/*
 * The dashboard's view of memories, for one user or (userId null, the owner) for everyone, and
 * the memory edits the dashboard offers.
 */

export type MemoryListItem = {
  id: string;
  userId: string;
  content: string;
  category: string;
  importance: number;
  tags: string[];
  updatedAt: Date;
};

/** Live memories, most important first; `query` filters by words in the content (case-insensitive). */
export async function listMemories(
  db: Queryable,
  options: { userId: string | null; query?: string; limit: number },
): Promise<MemoryListItem[]> {
  const words = (options.query ?? '').trim();
  const rows = await db.query<{
    id: string;
    user_id: string;
    content: string;
    category: string;
    importance: number;
    tags: string[];
    updated_at: Date;
  }>(
    `SELECT id, user_id, content, category, importance, tags, updated_at FROM memory_entries
     WHERE archived_at IS NULL AND ($1::text IS NULL OR user_id = $1)
       AND ($2 = '' OR content ILIKE '%' || replace(replace(replace($2, '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%')
     ORDER BY importance DESC, updated_at DESC LIMIT $3`,
    [options.userId, words, Math.max(1, Math.trunc(options.limit))],
  );
  return rows.map((row) => ({
    id: row.id,
    userId: row.user_id,
    content: row.content,
    category: row.category,
    importance: Number(row.importance),
    tags: row.tags,
    updatedAt: new Date(row.updated_at),
  }));
}

/** Sets a memory's importance (0..1); false when no such live memory is visible to `userId`. */
export async function setMemoryImportance(
  db: Queryable,
  userId: string | null,
  id: string,
  importance: number,
): Promise<boolean> {
  const rows = await db.query(
    `UPDATE memory_entries SET importance = $3, decayed_at = now(), updated_at = now()
     WHERE id = $1 AND ($2::text IS NULL OR user_id = $2) AND archived_at IS NULL RETURNING id`,
    [id, userId, Math.min(1, Math.max(0, importance))],
  );
  return rows.length > 0;
}

/** Forgets (archives) a memory; false when no such live memory is visible to `userId`. */
export async function forgetMemory(db: Queryable, userId: string | null, id: string): Promise<boolean> {
  const rows = await db.query(
    `UPDATE memory_entries SET archived_at = now(), updated_at = now()
     WHERE id = $1 AND ($2::text IS NULL OR user_id = $2) AND archived_at IS NULL RETURNING id`,
    [id, userId],
  );
  return rows.length > 0;
}
