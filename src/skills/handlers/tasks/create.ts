import { z } from 'zod';
import { createTask, localDate, TASK_PRIORITIES } from '../../../tasks/index.ts';
import { flag } from '../../flags.ts';
import { defineHandler, ok } from '../../types.ts';
import { formatTaskLine } from './format.ts';
import { dateFlag, failWith, recurrenceFlag, resolveAssignee, resolveDate, taskContext } from './shared.ts';

export const createTaskHandler = defineHandler({
  name: 'tasks.create',
  flags: z
    .object({
      title: flag.string(),
      description: flag.text().optional(),
      priority: flag.enum(TASK_PRIORITIES).default('medium'),
      due: dateFlag().optional(),
      assignee: flag.string().optional(),
      tags: flag.list().optional(),
      parent: flag.string().optional(),
      recurrence: recurrenceFlag().optional(),
      depends_on: flag.list().optional(),
    })
    .strict(),
  async execute(flags, ctx) {
    ctx.signal.throwIfAborted();
    let dueDate: string | null = null;
    if (flags.due) {
      const due = resolveDate(flags.due, ctx);
      if (!due.ok) return due.result;
      dueDate = due.date;
    }
    const created = await createTask(taskContext(ctx), {
      title: flags.title,
      description: flags.description ?? null,
      priority: flags.priority,
      dueDate,
      assignee: flags.assignee ? resolveAssignee(flags.assignee, ctx) : null,
      tags: flags.tags ?? [],
      parentId: flags.parent ?? null,
      recurrence: flags.recurrence ?? null,
      dependsOn: flags.depends_on ?? [],
    });
    if (!created.ok) return failWith(created);
    const task = created.value;
    const lines = [`Created ${formatTaskLine(task, localDate(ctx.user.timezone, ctx.now()))}`];
    if (task.parentId) lines.push(`Subtask of ${task.parentId}.`);
    const dependsOn = [...new Set((flags.depends_on ?? []).map((id) => id.toLowerCase()))];
    if (dependsOn.length > 0) lines.push(`Depends on ${dependsOn.join(', ')}.`);
    return ok(lines.join('\n'), {
      metadata: { id: task.id, ids: [task.id], count: 1, task },
      receipt: `${task.title} (${task.id})`,
    });
  },
});
