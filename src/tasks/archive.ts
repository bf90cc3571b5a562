import { recordHistory } from './history.ts';
import { lockTask } from './lookup.ts';
import { asOutcome, normalizeId, TASK_COLUMNS, toTask } from './rows.ts';
import type { Task, TaskContext, TaskOutcome } from './types.ts';

export type ArchiveResult = { task: Task; alreadyArchived: boolean };

/**
 * Archives one of the user's tasks: sets archived_at and records it in history. Tasks are
 * never deleted; `updateTask(..., {restore: true})` brings one back.
 */
export async function archiveTask(ctx: TaskContext, taskId: string): Promise<TaskOutcome<ArchiveResult>> {
  return asOutcome(() =>
    ctx.database.transaction(async (tx) => {
      const current = await lockTask(tx, ctx.userId, normalizeId(taskId));
      if (current.archivedAt) return { task: current, alreadyArchived: true };
      const at = ctx.now();
      const rows = await tx.query(
        `UPDATE tasks AS t SET archived_at = $3, updated_at = $3 WHERE t.user_id = $1 AND t.id = $2
         RETURNING ${TASK_COLUMNS}`,
        [ctx.userId, current.id, at],
      );
      const task = toTask(rows[0] ?? {});
      await recordHistory(
        tx,
        ctx,
        task.id,
        [{ field: 'archived_at', oldValue: null, newValue: task.archivedAt }],
        at,
      );
      return { task, alreadyArchived: false };
    }),
  );
}
