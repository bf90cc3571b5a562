import type { Queryable } from '../db/index.ts';

/** A task as the dashboard lists it. */
export type TaskListItem = {
  id: string;
  userId: string;
  title: string;
  status: string;
  priority: string;
  dueDate: string | null;
  updatedAt: Date;
};

/** Unarchived tasks of one user (or of everyone for the owner, userId null), open ones first. */
export async function listTasksForDashboard(
  db: Queryable,
  options: { userId: string | null; limit: number },
): Promise<TaskListItem[]> {
  const rows = await db.query<{
    id: string;
    user_id: string;
    title: string;
    status: string;
    priority: string;
    due_date: string | Date | null;
    updated_at: Date;
  }>(
    `SELECT id, user_id, title, status, priority, due_date::text AS due_date, updated_at FROM tasks
     WHERE archived_at IS NULL AND ($1::text IS NULL OR user_id = $1)
     ORDER BY (status IN ('done', 'cancelled')), updated_at DESC, id LIMIT $2`,
    [options.userId, Math.max(1, Math.trunc(options.limit))],
  );
  return rows.map((row) => ({
    id: row.id,
    userId: row.user_id,
    title: row.title,
    status: row.status,
    priority: row.priority,
    dueDate: row.due_date === null ? null : String(row.due_date),
    updatedAt: new Date(row.updated_at),
  }));
}
