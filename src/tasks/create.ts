import type { Queryable } from '../db/index.ts';
import { DATE_INPUT_FORMS, isRealDate } from './dates.ts';
import { changeDependencies } from './dependencies.ts';
import { recordHistory } from './history.ts';
import { requireTaskIds } from './lookup.ts';
import { parseRecurrence } from './recurrence.ts';
import {
  asOutcome,
  normalizeId,
  normalizeTags,
  randomTaskId,
  TASK_COLUMNS,
  TaskRejection,
  toTask,
} from './rows.ts';
import type { Task, TaskContext, TaskOutcome, TaskPriority, TaskStatus } from './types.ts';

export type NewTask = {
  title: string;
  description?: string | null;
  status?: TaskStatus;
  priority?: TaskPriority;
  /** `YYYY-MM-DD` */
  dueDate?: string | null;
  assignee?: string | null;
  tags?: readonly string[];
  parentId?: string | null;
  /** One of RECURRENCE_FORMS. */
  recurrence?: string | null;
  dependsOn?: readonly string[];
};

/** Creates a task for `ctx.userId`, with its dependencies, in one transaction. */
export async function createTask(ctx: TaskContext, input: NewTask): Promise<TaskOutcome<Task>> {
  return asOutcome(() => ctx.database.transaction((tx) => insertTask(tx, ctx, input, ctx.now())));
}

/**
 * Validates and inserts a task inside the caller's transaction, records its `created`
 * history row and links its dependencies. `origin` names the occurrence it continues.
 */
export async function insertTask(
  tx: Queryable,
  ctx: TaskContext,
  input: NewTask,
  at: Date,
  origin: { previousOccurrence: string } | null = null,
): Promise<Task> {
  const title = input.title.trim();
  if (!title) throw new TaskRejection('invalid', 'A task needs a title.');
  const dueDate = input.dueDate ?? null;
  if (dueDate !== null && !isRealDate(dueDate)) {
    throw new TaskRejection('invalid', `${dueDate} is not a real calendar date. Use ${DATE_INPUT_FORMS}.`);
  }
  let recurrence: string | null = null;
  if (input.recurrence) {
    const parsed = parseRecurrence(input.recurrence);
    if (!parsed.ok) throw new TaskRejection('invalid', parsed.error);
    recurrence = parsed.rule;
  }
  const parentId = input.parentId ? normalizeId(input.parentId) : null;
  if (parentId) await requireTaskIds(tx, ctx.userId, [parentId]);

  const values = [
    ctx.userId,
    title,
    input.description?.trim() || null,
    input.status ?? 'todo',
    input.priority ?? 'medium',
    dueDate,
    input.assignee?.trim() || null,
    normalizeTags(input.tags ?? []),
    parentId,
    recurrence,
    at,
  ];
  const nextId = ctx.randomId ?? randomTaskId;
  let task: Task | null = null;
  // Ids are random; on the rare collision draw another rather than fail.
  for (let attempt = 0; attempt < 8 && task === null; attempt++) {
    const rows = await tx.query(
      `INSERT INTO tasks AS t (id, user_id, title, description, status, priority, due_date, assignee, tags,
         parent_id, recurrence, completed_at, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7::date, $8, $9::text[], $10, $11,
         CASE WHEN $5 = 'done' THEN $12::timestamptz END, $12, $12)
       ON CONFLICT (id) DO NOTHING
       RETURNING ${TASK_COLUMNS}`,
      [nextId(), ...values],
    );
    task = rows[0] ? toTask(rows[0]) : null;
  }
  if (task === null) throw new Error('could not draw an unused task id');

  const created: Record<string, unknown> = { title };
  if (origin) created.previousOccurrence = origin.previousOccurrence;
  await recordHistory(tx, ctx, task.id, [{ field: 'created', oldValue: null, newValue: created }], at);
  if (input.dependsOn && input.dependsOn.length > 0) {
    await changeDependencies(tx, ctx, task.id, { add: input.dependsOn, remove: [] }, at);
  }
  return task;
}
