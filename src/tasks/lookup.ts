import type { Queryable } from '../db/index.ts';
import { TASK_COLUMNS, TaskRejection, toTask } from './rows.ts';
import { notFoundMessage, type Task } from './types.ts';

/** Loads the user's task and locks its row for the rest of the transaction. */
export async function lockTask(tx: Queryable, userId: string, id: string): Promise<Task> {
  const rows = await tx.query(
    `SELECT ${TASK_COLUMNS} FROM tasks t WHERE t.user_id = $1 AND t.id = $2 FOR UPDATE`,
    [userId, id],
  );
  const row = rows[0];
  if (!row) throw new TaskRejection('not_found', notFoundMessage(id));
  return toTask(row);
}

/** Throws not_found naming the first of `ids` that is not one of the user's tasks. */
export async function requireTaskIds(tx: Queryable, userId: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  const rows = await tx.query<{ id: string }>(
    'SELECT id FROM tasks WHERE user_id = $1 AND id = ANY($2::text[])',
    [userId, [...ids]],
  );
  const found = new Set(rows.map((row) => row.id));
  const missing = ids.find((id) => !found.has(id));
  if (missing !== undefined) throw new TaskRejection('not_found', notFoundMessage(missing));
}
