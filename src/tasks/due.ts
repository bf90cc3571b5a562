import type { Queryable } from '../db/index.ts';
import { ACTIVE_STATUSES } from './types.ts';

/** An active task with a due date, for reminders. */
export type DueTask = { id: string; userId: string; title: string; dueDate: string };

/**
 * Active, unarchived tasks of every user due on or before `throughDate` (YYYY-MM-DD), oldest
 * due first, at most `limit`. For the reminder sweep, which then reads each date in its user's zone.
 */
export async function activeTasksDueBy(db: Queryable, throughDate: string, limit = 1000): Promise<DueTask[]> {
  const rows = await db.query(
    `SELECT id, user_id, title, due_date::text AS due_date FROM tasks
     WHERE due_date IS NOT NULL AND due_date <= $1::date AND archived_at IS NULL
       AND status = ANY($2::text[])
     ORDER BY due_date, id LIMIT $3`,
    [throughDate, [...ACTIVE_STATUSES], limit],
  );
  return rows.map((row) => ({
    id: String(row.id),
    userId: String(row.user_id),
    title: String(row.title),
    dueDate: String(row.due_date),
  }));
}
