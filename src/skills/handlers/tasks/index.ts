import type { SkillHandler } from '../../types.ts';
import { createTaskHandler } from './create.ts';
import { deleteTaskHandler } from './delete.ts';
import { getTasksHandler } from './get.ts';
import { searchTasksHandler } from './search.ts';
import { updateTaskHandler } from './update.ts';

export { createTaskHandler, deleteTaskHandler, getTasksHandler, searchTasksHandler, updateTaskHandler };

/** The built-in handlers of the `tasks` domain, registered under their skill names. */
export const taskHandlers: SkillHandler[] = [
  createTaskHandler,
  searchTasksHandler,
  getTasksHandler,
  updateTaskHandler,
  deleteTaskHandler,
];
