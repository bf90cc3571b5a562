import { z } from 'zod';
import {
  ACTIVE_STATUSES,
  localDate,
  searchTasks,
  TASK_PRIORITIES,
  TASK_SORTS,
  TASK_STATUSES,
  type TaskStatus,
} from '../../../tasks/index.ts';
import { flag } from '../../flags.ts';
import { defineHandler, ok } from '../../types.ts';
import { formatTaskLine } from './format.ts';
import { dateFlag, enumList, failWith, resolveAssignee, resolveDate, taskContext } from './shared.ts';

/** `all` means every status; `overdue` (as in `--status overdue`) means the --overdue switch. */
const STATUS_WORDS = [...TASK_STATUSES, 'all', 'overdue'] as const;

export const searchTasksHandler = defineHandler({
  name: 'tasks.search',
  flags: z
    .object({
      query: flag.string().optional(),
      status: enumList(STATUS_WORDS).optional(),
      assignee: flag.string().optional(),
      priority: enumList(TASK_PRIORITIES).optional(),
      tags: flag.list().optional(),
      due_before: dateFlag().optional(),
      due_after: dateFlag().optional(),
      overdue: flag.bool().optional(),
      sort: flag.enum(TASK_SORTS).optional(),
      limit: flag.int({ min: 1, max: 100 }).default(20),
    })
    .strict(),
  async execute(flags, ctx) {
    ctx.signal.throwIfAborted();
    const words = flags.status ?? [];
    const named = words.filter((word): word is TaskStatus =>
      (TASK_STATUSES as readonly string[]).includes(word),
    );
    const statuses: readonly TaskStatus[] = words.includes('all')
      ? TASK_STATUSES
      : named.length > 0
        ? named
        : ACTIVE_STATUSES;
    const overdue = flags.overdue === true || words.includes('overdue');
    const dates: { dueBefore?: string; dueAfter?: string } = {};
    for (const [key, input] of [
      ['dueBefore', flags.due_before],
      ['dueAfter', flags.due_after],
    ] as const) {
      if (!input) continue;
      const resolved = resolveDate(input, ctx);
      if (!resolved.ok) return resolved.result;
      dates[key] = resolved.date;
    }
    const assignee = flags.assignee ? resolveAssignee(flags.assignee, ctx) : undefined;
    const found = await searchTasks(taskContext(ctx), {
      query: flags.query,
      statuses,
      assignee,
      priorities: flags.priority,
      tags: flags.tags,
      ...dates,
      overdue,
      sort: flags.sort,
      limit: flags.limit,
    });
    if (!found.ok) return failWith(found);
    const { tasks, total } = found.value;

    const filters = [`status ${statuses.join(', ')}`];
    if (flags.query) filters.push(`text "${flags.query}"`);
    if (assignee) filters.push(`assignee ${assignee}`);
    if (flags.priority) filters.push(`priority ${flags.priority.join(', ')}`);
    if (flags.tags && flags.tags.length > 0) filters.push(`tags ${flags.tags.join(', ')}`);
    if (dates.dueBefore) filters.push(`due on or before ${dates.dueBefore}`);
    if (dates.dueAfter) filters.push(`due on or after ${dates.dueAfter}`);
    if (overdue) filters.push('overdue');
    const metadata = { ids: tasks.map((task) => task.id), count: tasks.length, total, tasks };
    if (tasks.length === 0) {
      return ok(`No tasks match (${filters.join('; ')}). Loosen the filters, or add --status all.`, {
        metadata,
      });
    }
    const today = localDate(ctx.user.timezone, ctx.now());
    const sortedBy = flags.sort ?? (flags.query ? 'relevance' : 'due_date');
    const lines = [
      `${total} task${total === 1 ? '' : 's'} (${filters.join('; ')}; sorted by ${sortedBy}):`,
      ...tasks.map((task) => formatTaskLine(task, today)),
    ];
    if (total > tasks.length)
      lines.push(`Showing ${tasks.length} of ${total}: narrow the filters or raise --limit (max 100).`);
    return ok(lines.join('\n'), { metadata });
  },
});
