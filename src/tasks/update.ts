import type { Queryable } from '../db/index.ts';
import { insertComment } from './comments.ts';
import { insertTask } from './create.ts';
import { DATE_INPUT_FORMS, isRealDate, localDate } from './dates.ts';
import { changeDependencies } from './dependencies.ts';
import { type FieldChange, recordHistory } from './history.ts';
import { lockTask } from './lookup.ts';
import { nextOccurrence, parseRecurrence } from './recurrence.ts';
import { asOutcome, normalizeId, normalizeTags, TASK_COLUMNS, TaskRejection, toTask } from './rows.ts';
import type { Task, TaskComment, TaskContext, TaskOutcome, TaskPriority, TaskStatus } from './types.ts';

/** What to change. `null` clears a field; an absent key leaves it alone. */
export type TaskChanges = {
  title?: string;
  description?: string | null;
  status?: TaskStatus;
  priority?: TaskPriority;
  /** `YYYY-MM-DD` */
  dueDate?: string | null;
  assignee?: string | null;
  /** Replaces the tags; `addTags` and `removeTags` then apply to the result. */
  tags?: readonly string[];
  addTags?: readonly string[];
  removeTags?: readonly string[];
  recurrence?: string | null;
  comment?: string;
  addDependsOn?: readonly string[];
  removeDependsOn?: readonly string[];
  /** Brings an archived task back. Updating an archived task needs it. */
  restore?: boolean;
};

export type TaskUpdate = {
  task: Task;
  /** One entry per changed field, as written to task_history. */
  changes: FieldChange[];
  comment: TaskComment | null;
  dependenciesAdded: string[];
  dependenciesRemoved: string[];
  /** The task created because a recurring task was completed. */
  nextOccurrence: Task | null;
};

type Columns = {
  title: string;
  description: string | null;
  status: TaskStatus;
  priority: TaskPriority;
  due_date: string | null;
  assignee: string | null;
  tags: string[];
  recurrence: string | null;
};

/**
 * Applies `changes` to one of the user's tasks in one transaction, writing a history row per
 * changed field. Completing a recurring task creates its next occurrence (once per task).
 */
export async function updateTask(
  ctx: TaskContext,
  taskId: string,
  changes: TaskChanges,
): Promise<TaskOutcome<TaskUpdate>> {
  return asOutcome(() =>
    ctx.database.transaction(async (tx) => {
      const at = ctx.now();
      const current = await lockTask(tx, ctx.userId, normalizeId(taskId));
      if (current.archivedAt && !changes.restore) {
        throw new TaskRejection(
          'archived',
          `Task ${current.id} is archived. Restore it first: tasks.update --id ${current.id} --restore`,
        );
      }
      const next = desiredColumns(current, changes);
      const fieldChanges = diff(current, next);
      if (changes.restore && current.archivedAt) {
        fieldChanges.push({ field: 'archived_at', oldValue: current.archivedAt, newValue: null });
      }
      let task = current;
      if (fieldChanges.length > 0) {
        task = await writeColumns(tx, ctx, current, next, Boolean(changes.restore), at);
        await recordHistory(tx, ctx, task.id, fieldChanges, at);
      }
      const comment =
        changes.comment !== undefined ? await insertComment(tx, ctx, task.id, changes.comment, at) : null;
      const edits = { add: changes.addDependsOn ?? [], remove: changes.removeDependsOn ?? [] };
      const dependencies =
        edits.add.length > 0 || edits.remove.length > 0
          ? await changeDependencies(tx, ctx, task.id, edits, at)
          : { added: [], removed: [] };
      const completed = current.status !== 'done' && task.status === 'done';
      const occurrence = completed && task.recurrence ? await continueRecurrence(tx, ctx, task, at) : null;
      if (comment || dependencies.added.length > 0 || dependencies.removed.length > 0) {
        task = await lockTask(tx, ctx.userId, task.id);
      }
      return {
        task,
        changes: fieldChanges,
        comment,
        dependenciesAdded: dependencies.added,
        dependenciesRemoved: dependencies.removed,
        nextOccurrence: occurrence,
      };
    }),
  );
}

function desiredColumns(current: Task, changes: TaskChanges): Columns {
  const title = changes.title !== undefined ? changes.title.trim() : current.title;
  if (!title) throw new TaskRejection('invalid', 'A task needs a title.');
  const dueDate = changes.dueDate !== undefined ? changes.dueDate : current.dueDate;
  if (dueDate !== null && !isRealDate(dueDate)) {
    throw new TaskRejection('invalid', `${dueDate} is not a real calendar date. Use ${DATE_INPUT_FORMS}.`);
  }
  let recurrence = current.recurrence;
  if (changes.recurrence !== undefined) {
    if (changes.recurrence === null) recurrence = null;
    else {
      const parsed = parseRecurrence(changes.recurrence);
      if (!parsed.ok) throw new TaskRejection('invalid', parsed.error);
      recurrence = parsed.rule;
    }
  }
  let tags = changes.tags !== undefined ? normalizeTags(changes.tags) : current.tags;
  tags = normalizeTags([...tags, ...(changes.addTags ?? [])]);
  const removed = new Set(normalizeTags(changes.removeTags ?? []));
  tags = tags.filter((tag) => !removed.has(tag));
  return {
    title,
    description:
      changes.description !== undefined ? changes.description?.trim() || null : current.description,
    status: changes.status ?? current.status,
    priority: changes.priority ?? current.priority,
    due_date: dueDate,
    assignee: changes.assignee !== undefined ? changes.assignee?.trim() || null : current.assignee,
    tags,
    recurrence,
  };
}

function diff(current: Task, next: Columns): FieldChange[] {
  const before: Columns = {
    title: current.title,
    description: current.description,
    status: current.status,
    priority: current.priority,
    due_date: current.dueDate,
    assignee: current.assignee,
    tags: current.tags,
    recurrence: current.recurrence,
  };
  const changes: FieldChange[] = [];
  for (const field of Object.keys(next) as (keyof Columns)[]) {
    const oldValue = before[field];
    const newValue = next[field];
    if (JSON.stringify(oldValue) !== JSON.stringify(newValue)) changes.push({ field, oldValue, newValue });
  }
  return changes;
}

async function writeColumns(
  tx: Queryable,
  ctx: TaskContext,
  current: Task,
  next: Columns,
  restore: boolean,
  at: Date,
): Promise<Task> {
  // completed_at follows status: set on entering done, cleared on leaving it.
  const completedAt = next.status === 'done' ? (current.status === 'done' ? current.completedAt : at) : null;
  const rows = await tx.query(
    `UPDATE tasks AS t SET title = $3, description = $4, status = $5, priority = $6, due_date = $7::date,
       assignee = $8, tags = $9::text[], recurrence = $10, completed_at = $11, updated_at = $12,
       archived_at = CASE WHEN $13 THEN NULL ELSE t.archived_at END
     WHERE t.user_id = $1 AND t.id = $2
     RETURNING ${TASK_COLUMNS}`,
    [
      ctx.userId,
      current.id,
      next.title,
      next.description,
      next.status,
      next.priority,
      next.due_date,
      next.assignee,
      next.tags,
      next.recurrence,
      completedAt,
      at,
      restore,
    ],
  );
  if (!rows[0]) throw new Error(`task ${current.id} vanished while locked`);
  return toTask(rows[0]);
}

/** Creates the next occurrence of a just-completed recurring task, unless one exists already. */
async function continueRecurrence(
  tx: Queryable,
  ctx: TaskContext,
  task: Task,
  at: Date,
): Promise<Task | null> {
  const recurrence = task.recurrence;
  if (!recurrence) return null;
  const earlier = await tx.query(
    `SELECT 1 FROM task_history WHERE user_id = $1 AND task_id = $2 AND field = 'next_occurrence' LIMIT 1`,
    [ctx.userId, task.id],
  );
  if (earlier.length > 0) return null;
  const today = localDate(ctx.timezone, at) ?? at.toISOString().slice(0, 10);
  const occurrence = await insertTask(
    tx,
    ctx,
    {
      title: task.title,
      description: task.description,
      priority: task.priority,
      dueDate: nextOccurrence(recurrence, task.dueDate, today),
      assignee: task.assignee,
      tags: task.tags,
      parentId: task.parentId,
      recurrence,
    },
    at,
    { previousOccurrence: task.id },
  );
  await recordHistory(
    tx,
    ctx,
    task.id,
    [{ field: 'next_occurrence', oldValue: null, newValue: occurrence.id }],
    at,
  );
  return occurrence;
}
