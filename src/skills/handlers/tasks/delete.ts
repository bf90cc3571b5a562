import { z } from 'zod';
import { archiveTask } from '../../../tasks/index.ts';
import { flag } from '../../flags.ts';
import { defineHandler, ok } from '../../types.ts';
import { failWith, taskContext } from './shared.ts';

export const deleteTaskHandler = defineHandler({
  name: 'tasks.delete',
  flags: z.object({ id: flag.string() }).strict(),
  async execute(flags, ctx) {
    ctx.signal.throwIfAborted();
    const archived = await archiveTask(taskContext(ctx), flags.id);
    if (!archived.ok) return failWith(archived);
    const { task, alreadyArchived } = archived.value;
    const restore = `Restore it with: tasks.update --id ${task.id} --restore`;
    const content = alreadyArchived
      ? `[${task.id}] ${task.title} was already archived. ${restore}`
      : `Archived [${task.id}] ${task.title}. It no longer shows in tasks.search; nothing was deleted. ${restore}`;
    return ok(content, {
      metadata: { id: task.id, ids: [task.id], count: 1, archived: true, alreadyArchived },
      sideEffects: alreadyArchived ? [] : [`archived task ${task.id}`],
      receipt: `${task.title} (${task.id})${alreadyArchived ? ', already archived' : ', archived'}`,
    });
  },
});
