import type { SkillHandler } from '../types.ts';
import { calendarHandlers } from './calendar/index.ts';
import { crmHandlers } from './crm/index.ts';
import { emailHandlers } from './email/index.ts';
import { fileHandlers } from './files/index.ts';
import { memoryHandlers } from './memory/index.ts';
import { profileHandlers } from './profile/index.ts';
import { skillHandlers } from './skills/index.ts';
import { taskHandlers } from './tasks/index.ts';
import { webHandlers } from './web/index.ts';
import { workflowHandlers } from './workflow/build.ts';

/** Every built-in handler, registered under its skill name. */
export function builtinHandlers(): Map<string, SkillHandler> {
  const handlers = new Map<string, SkillHandler>();
  for (const handler of [
    ...taskHandlers,
    ...memoryHandlers,
    ...profileHandlers,
    ...emailHandlers,
    ...calendarHandlers,
    ...crmHandlers,
    ...fileHandlers,
    ...workflowHandlers,
    ...skillHandlers,
    ...webHandlers,
  ]) {
    if (handlers.has(handler.name)) throw new Error(`two handlers named ${handler.name}`);
    handlers.set(handler.name, handler);
  }
  return handlers;
}
