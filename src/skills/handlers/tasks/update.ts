import { z } from 'zod';
import {
  localDate,
  TASK_PRIORITIES,
  TASK_STATUSES,
  type TaskChanges,
  updateTask,
} from '../../../tasks/index.ts';
import { flag } from '../../flags.ts';
import { defineHandler, fail, ok } from '../../types.ts';
import { formatChange, formatTaskLine } from './format.ts';
import {
  dateFlag,
  failWith,
  isNone,
  recurrenceFlag,
  resolveAssignee,
  resolveDate,
  taskContext,
} from './shared.ts';

const CHANGE_FLAGS =
  '--status, --priority, --due, --assignee, --tags, --add-tags, --remove-tags, --title, --description, ' +
  '--comment, --depends-on, --remove-depends-on, --recurrence, --restore';

export const updateTaskHandler = defineHandler({
  name: 'tasks.update',
  flags: z
    .object({
      id: flag.string(),
      status: flag.enum(TASK_STATUSES).optional(),
      priority: flag.enum(TASK_PRIORITIES).optional(),
      due: dateFlag({ clearable: true }).optional(),
      assignee: flag.string().optional(),
      tags: flag.list().optional(),
      add_tags: flag.list().optional(),
      remove_tags: flag.list().optional(),
      title: flag.string().optional(),
      description: flag.text().optional(),
      comment: flag.string().optional(),
      depends_on: flag.list().optional(),
      remove_depends_on: flag.list().optional(),
      recurrence: recurrenceFlag({ clearable: true }).optional(),
      restore: flag.bool().optional(),
    })
    .strict(),
  async execute(flags, ctx) {
    ctx.signal.throwIfAborted();
    const { id, ...rest } = flags;
    if (Object.values(rest).every((value) => value === undefined || value === false)) {
      return fail(`Nothing to change. Give at least one of ${CHANGE_FLAGS}.`);
    }
    const changes: TaskChanges = {
      title: flags.title,
      status: flags.status,
      priority: flags.priority,
      addTags: flags.add_tags,
      removeTags: flags.remove_tags,
      comment: flags.comment,
      addDependsOn: flags.depends_on,
      removeDependsOn: flags.remove_depends_on,
      restore: flags.restore,
    };
    if (flags.due !== undefined) {
      if (isNone(flags.due)) changes.dueDate = null;
      else {
        const due = resolveDate(flags.due, ctx);
        if (!due.ok) return due.result;
        changes.dueDate = due.date;
      }
    }
    if (flags.assignee !== undefined) {
      changes.assignee = isNone(flags.assignee) ? null : resolveAssignee(flags.assignee, ctx);
    }
    if (flags.tags !== undefined) {
      changes.tags = flags.tags.length === 1 && isNone(flags.tags[0] ?? '') ? [] : flags.tags;
    }
    if (flags.description !== undefined) {
      changes.description =
        flags.description.trim() === '' || isNone(flags.description) ? null : flags.description;
    }
    if (flags.recurrence !== undefined)
      changes.recurrence = isNone(flags.recurrence) ? null : flags.recurrence;

    const updated = await updateTask(taskContext(ctx), id, changes);
    if (!updated.ok) return failWith(updated);
    const { task, comment, dependenciesAdded, dependenciesRemoved, nextOccurrence } = updated.value;
    const today = localDate(ctx.user.timezone, ctx.now());
    const done = updated.value.changes.map(formatChange);
    if (comment) done.push('comment added');
    if (dependenciesAdded.length > 0) done.push(`now depends on ${dependenciesAdded.join(', ')}`);
    if (dependenciesRemoved.length > 0) done.push(`no longer depends on ${dependenciesRemoved.join(', ')}`);
    if (done.length === 0) {
      return ok(`Nothing changed: ${formatTaskLine(task, today)} already has those values.`, {
        metadata: { id: task.id, ids: [task.id], count: 1, changed: [] },
        receipt: `${task.title} (${task.id}), nothing changed`,
      });
    }
    const lines = [`Updated ${formatTaskLine(task, today)}`, `Changes: ${done.join('; ')}`];
    if (nextOccurrence) lines.push(`Next occurrence: ${formatTaskLine(nextOccurrence, today)}`);
    const ids = nextOccurrence ? [task.id, nextOccurrence.id] : [task.id];
    return ok(lines.join('\n'), {
      metadata: {
        id: task.id,
        ids,
        count: ids.length,
        changed: updated.value.changes.map((change) => change.field),
        task,
        nextOccurrenceId: nextOccurrence?.id ?? null,
      },
      sideEffects: [
        `updated task ${task.id}`,
        ...(nextOccurrence ? [`created task ${nextOccurrence.id}`] : []),
      ],
      receipt: `${task.title} (${task.id}): ${done.join('; ')}`,
    });
  },
});
