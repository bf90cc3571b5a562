import type { Queryable } from '../db/index.ts';
import { addDays } from './dates.ts';
import { normalizeId } from './rows.ts';
import { ACTIVE_STATUSES, type TASK_PRIORITIES, type TASK_STATUSES } from './types.ts';

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

/** What the dashboard's task list shows: `open` is every active status; due is judged against `today`. */
export type TaskListFilter = {
  status?: 'open' | (typeof TASK_STATUSES)[number];
  priority?: (typeof TASK_PRIORITIES)[number];
  due?: 'overdue' | 'today' | 'week' | 'none';
  /** `YYYY-MM-DD` in the viewer's zone; needed by every `due` filter but `none`. */
  today?: string;
};

export const TASK_DUE_FILTERS = ['overdue', 'today', 'week', 'none'] as const;

/** Unarchived tasks of one user (or of everyone for the owner, userId null), open ones first. */
export async function listTasksForDashboard(
  db: Queryable,
  options: { userId: string | null; limit: number; filter?: TaskListFilter },
): Promise<TaskListItem[]> {
  const { filter = {} } = options;
  const statuses = filter.status === 'open' ? [...ACTIVE_STATUSES] : filter.status ? [filter.status] : null;
  const today = filter.today ?? new Date().toISOString().slice(0, 10);
  // [from, through] of due dates; `none` is the only filter that wants no due date.
  const dueRange: [string | null, string | null] | null =
    filter.due === 'overdue'
      ? [null, addDays(today, -1)]
      : filter.due === 'today'
        ? [today, today]
        : filter.due === 'week'
          ? [today, addDays(today, 6)]
          : null;
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
       AND ($3::text[] IS NULL OR status = ANY($3::text[]))
       AND ($4::text IS NULL OR priority = $4)
       AND ($5::boolean IS NOT TRUE OR due_date IS NULL)
       AND ($6::boolean IS NOT TRUE OR (due_date IS NOT NULL
         AND ($7::date IS NULL OR due_date >= $7::date) AND ($8::date IS NULL OR due_date <= $8::date)))
       AND ($9::boolean IS NOT TRUE OR status IN ('todo', 'in_progress', 'blocked'))
     ORDER BY (status IN ('done', 'cancelled')), updated_at DESC, id LIMIT $2`,
    [
      options.userId,
      Math.max(1, Math.trunc(options.limit)),
      statuses,
      filter.priority ?? null,
      filter.due === 'none',
      dueRange !== null,
      dueRange?.[0] ?? null,
      dueRange?.[1] ?? null,
      // Overdue means still to do: a finished task is never late.
      filter.due === 'overdue',
    ],
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

/** Whose task `taskId` is, when `userId` (null: anyone's, for the owner) may see it; null otherwise. */
export async function taskOwner(
  db: Queryable,
  userId: string | null,
  taskId: string,
): Promise<string | null> {
  const rows = await db.query<{ user_id: string }>(
    'SELECT user_id FROM tasks WHERE id = $1 AND ($2::text IS NULL OR user_id = $2)',
    [normalizeId(taskId), userId],
  );
  return rows[0]?.user_id ?? null;
}
