import { localDate } from './dates.ts';
import { PRIORITY_RANK_SQL, TASK_COLUMNS, toTask } from './rows.ts';
import type { TaskReadContext } from './search.ts';
import type { Task } from './types.ts';

export type TaskOverview = {
  open: number;
  overdue: number;
  dueToday: number /** most pressing first */;
  next: Task[];
};

/**
 * A short picture of the user's open work for the conversation context: counts, and the
 * `limit` most pressing open tasks (overdue and due soonest first, then by priority).
 */
export async function getTaskOverview(ctx: TaskReadContext, limit = 5): Promise<TaskOverview> {
  const today = localDate(ctx.timezone, ctx.now()) ?? ctx.now().toISOString().slice(0, 10);
  const open = `t.user_id = $1 AND t.archived_at IS NULL AND t.status IN ('todo', 'in_progress', 'blocked')`;
  const [counts, next] = await Promise.all([
    ctx.database.query<{ open: number; overdue: number; due_today: number }>(
      `SELECT count(*)::int AS open,
         count(*) FILTER (WHERE t.due_date < $2::date)::int AS overdue,
         count(*) FILTER (WHERE t.due_date = $2::date)::int AS due_today
       FROM tasks t WHERE ${open}`,
      [ctx.userId, today],
    ),
    ctx.database.query(
      `SELECT ${TASK_COLUMNS} FROM tasks t WHERE ${open}
       ORDER BY t.due_date ASC NULLS LAST, ${PRIORITY_RANK_SQL}, t.created_at LIMIT $2`,
      [ctx.userId, limit],
    ),
  ]);
  const row = counts[0];
  return {
    open: row?.open ?? 0,
    overdue: row?.overdue ?? 0,
    dueToday: row?.due_today ?? 0,
    next: next.map(toTask),
  };
}
