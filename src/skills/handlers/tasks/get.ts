import { z } from 'zod';
import { getRecentTasks, getTasks, localDate, type TaskDetail } from '../../../tasks/index.ts';
import { flag } from '../../flags.ts';
import { defineHandler, fail, ok } from '../../types.ts';
import { formatTaskDetail } from './format.ts';
import { failWith, taskContext } from './shared.ts';

export const getTasksHandler = defineHandler({
  name: 'tasks.get',
  flags: z
    .object({
      id: flag.string().optional(),
      ids: flag.list().optional(),
      recent: flag.int({ min: 1, max: 20 }).optional(),
    })
    .strict(),
  async execute(flags, ctx) {
    ctx.signal.throwIfAborted();
    const given = [flags.id, flags.ids, flags.recent].filter((value) => value !== undefined).length;
    if (given !== 1) {
      return fail(
        'Give exactly one of --id <task id>, --ids <id> <id> … or --recent <n>. Find ids with tasks.search.',
      );
    }
    const tasks = taskContext(ctx);
    let details: TaskDetail[];
    if (flags.recent !== undefined) {
      details = await getRecentTasks(tasks, flags.recent);
      if (details.length === 0) return ok('No tasks yet.', { metadata: { ids: [], count: 0, tasks: [] } });
    } else {
      const ids = flags.id !== undefined ? [flags.id] : (flags.ids ?? []);
      if (ids.length === 0) return fail('--ids needs one or more task ids. Find ids with tasks.search.');
      const found = await getTasks(tasks, ids);
      if (!found.ok) return failWith(found);
      details = found.value;
    }
    const today = localDate(ctx.user.timezone, ctx.now());
    const content = details.map((task) => formatTaskDetail(task, today, ctx.user.timezone)).join('\n\n');
    return ok(content, {
      metadata: { ids: details.map((task) => task.id), count: details.length, tasks: details },
    });
  },
});
