import type { Queryable } from '../db/index.ts';
import { recordHistory } from './history.ts';
import { lockTask, requireTaskIds } from './lookup.ts';
import { asOutcome, normalizeId, TaskRejection } from './rows.ts';
import type { TaskContext, TaskOutcome } from './types.ts';

export type DependencyChange = { taskId: string; added: string[]; removed: string[]; dependsOn: string[] };

/** Makes `taskId` depend on each of `dependsOnIds`. Rejects unknown tasks and cycles. */
export async function addDependencies(
  ctx: TaskContext,
  taskId: string,
  dependsOnIds: readonly string[],
): Promise<TaskOutcome<DependencyChange>> {
  return asOutcome(() =>
    ctx.database.transaction(async (tx) => {
      const id = normalizeId(taskId);
      await lockTask(tx, ctx.userId, id);
      return changeDependencies(tx, ctx, id, { add: dependsOnIds, remove: [] }, ctx.now());
    }),
  );
}

/** Drops the dependencies of `taskId` on `dependsOnIds`; ids it does not depend on are ignored. */
export async function removeDependencies(
  ctx: TaskContext,
  taskId: string,
  dependsOnIds: readonly string[],
): Promise<TaskOutcome<DependencyChange>> {
  return asOutcome(() =>
    ctx.database.transaction(async (tx) => {
      const id = normalizeId(taskId);
      await lockTask(tx, ctx.userId, id);
      return changeDependencies(tx, ctx, id, { add: [], remove: dependsOnIds }, ctx.now());
    }),
  );
}

/**
 * Adds and removes dependency edges of a task the caller has already checked belongs to the
 * user, inside the caller's transaction, and records one `depends_on` history row.
 */
export async function changeDependencies(
  tx: Queryable,
  ctx: TaskContext,
  taskId: string,
  edits: { add: readonly string[]; remove: readonly string[] },
  at: Date,
): Promise<DependencyChange> {
  const add = [...new Set(edits.add.map(normalizeId))];
  const remove = [...new Set(edits.remove.map(normalizeId))];
  // Serializes dependency edits per user, so two concurrent edits cannot close a cycle together.
  await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
    `steward:task-dependencies:${ctx.userId}`,
  ]);
  await requireTaskIds(tx, ctx.userId, [...add, ...remove]);
  const before = await dependsOn(tx, taskId);

  const removed: string[] = [];
  if (remove.length > 0) {
    const rows = await tx.query<{ depends_on_id: string }>(
      `DELETE FROM task_dependencies WHERE task_id = $1 AND depends_on_id = ANY($2::text[]) RETURNING depends_on_id`,
      [taskId, remove],
    );
    removed.push(...rows.map((row) => row.depends_on_id));
  }
  const current = before.filter((id) => !removed.includes(id));
  const added: string[] = [];
  for (const dependencyId of add) {
    if (current.includes(dependencyId)) continue;
    if (dependencyId === taskId) throw new TaskRejection('cycle', `Task ${taskId} cannot depend on itself.`);
    if (await reaches(tx, dependencyId, taskId)) {
      throw new TaskRejection(
        'cycle',
        `Cannot make ${taskId} depend on ${dependencyId}: ${dependencyId} already depends on ${taskId} ` +
          '(directly or through other tasks), so this would make a cycle.',
      );
    }
    await tx.query('INSERT INTO task_dependencies (task_id, depends_on_id, created_at) VALUES ($1, $2, $3)', [
      taskId,
      dependencyId,
      at,
    ]);
    added.push(dependencyId);
  }
  const after = current.concat(added);
  if (added.length > 0 || removed.length > 0) {
    await recordHistory(tx, ctx, taskId, [{ field: 'depends_on', oldValue: before, newValue: after }], at);
    await tx.query('UPDATE tasks SET updated_at = $3 WHERE user_id = $1 AND id = $2', [
      ctx.userId,
      taskId,
      at,
    ]);
  }
  return { taskId, added, removed, dependsOn: after };
}

async function dependsOn(tx: Queryable, taskId: string): Promise<string[]> {
  const rows = await tx.query<{ depends_on_id: string }>(
    'SELECT depends_on_id FROM task_dependencies WHERE task_id = $1 ORDER BY created_at, depends_on_id',
    [taskId],
  );
  return rows.map((row) => row.depends_on_id);
}

/** True when `from` depends on `to`, directly or transitively. */
async function reaches(tx: Queryable, from: string, to: string): Promise<boolean> {
  const rows = await tx.query(
    `WITH RECURSIVE reach (id) AS (
       SELECT depends_on_id FROM task_dependencies WHERE task_id = $1
       UNION
       SELECT d.depends_on_id FROM task_dependencies d JOIN reach r ON d.task_id = r.id
     )
     SELECT 1 FROM reach WHERE id = $2 LIMIT 1`,
    [from, to],
  );
  return rows.length > 0;
}
