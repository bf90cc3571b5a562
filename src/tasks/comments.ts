import type { Queryable, Row } from '../db/index.ts';
import { lockTask } from './lookup.ts';
import { asOutcome, normalizeId, TaskRejection, toIso } from './rows.ts';
import type { TaskComment, TaskContext, TaskOutcome } from './types.ts';

/** Adds a comment by `ctx.actor` to one of the user's tasks. */
export async function addComment(
  ctx: TaskContext,
  taskId: string,
  body: string,
): Promise<TaskOutcome<TaskComment>> {
  return asOutcome(() =>
    ctx.database.transaction(async (tx) => {
      const id = normalizeId(taskId);
      await lockTask(tx, ctx.userId, id);
      return insertComment(tx, ctx, id, body, ctx.now());
    }),
  );
}

/** Inserts a comment on a task the caller has checked, and marks the task as updated. */
export async function insertComment(
  tx: Queryable,
  ctx: TaskContext,
  taskId: string,
  body: string,
  at: Date,
): Promise<TaskComment> {
  const text = body.trim();
  if (!text) throw new TaskRejection('invalid', 'A comment needs some text.');
  const rows = await tx.query(
    `INSERT INTO task_comments (task_id, user_id, author, body, created_at) VALUES ($1, $2, $3, $4, $5)
     RETURNING id, task_id, author, body, created_at`,
    [taskId, ctx.userId, ctx.actor, text, at],
  );
  await tx.query('UPDATE tasks SET updated_at = $3 WHERE user_id = $1 AND id = $2', [ctx.userId, taskId, at]);
  return toComment(rows[0] ?? {});
}

export function toComment(row: Row): TaskComment {
  return {
    id: Number(row.id),
    taskId: String(row.task_id),
    author: String(row.author),
    body: String(row.body),
    createdAt: toIso(row.created_at) ?? '',
  };
}
