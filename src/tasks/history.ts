import type { Queryable, Row } from '../db/index.ts';
import { jsonParam, toIso } from './rows.ts';
import type { TaskContext, TaskHistoryEntry } from './types.ts';

export type FieldChange = { field: string; oldValue: unknown; newValue: unknown };

/** Writes one task_history row per change, in the caller's transaction. */
export async function recordHistory(
  tx: Queryable,
  ctx: TaskContext,
  taskId: string,
  changes: readonly FieldChange[],
  at: Date,
): Promise<void> {
  if (changes.length === 0) return;
  const params: unknown[] = [taskId, ctx.userId, ctx.actor, ctx.executionId, at];
  const rows = changes.map((change) => {
    params.push(change.field, jsonParam(change.oldValue), jsonParam(change.newValue));
    const base = params.length - 3;
    return `($1, $2, $3, $${base + 1}, $${base + 2}::jsonb, $${base + 3}::jsonb, $4, $5)`;
  });
  await tx.query(
    `INSERT INTO task_history (task_id, user_id, actor, field, old_value, new_value, execution_id, created_at)
     VALUES ${rows.join(', ')}`,
    params,
  );
}

export function toHistoryEntry(row: Row): TaskHistoryEntry {
  return {
    id: Number(row.id),
    taskId: String(row.task_id),
    actor: String(row.actor),
    field: String(row.field),
    oldValue: row.old_value ?? null,
    newValue: row.new_value ?? null,
    executionId: (row.execution_id as string | null) ?? null,
    createdAt: toIso(row.created_at) ?? '',
  };
}
