import type { SkillHandler } from '../../types.ts';
import { relatedMemoriesHandler } from './related.ts';
import { saveMemoryHandler } from './save.ts';
import { searchMemoriesHandler } from './search.ts';

export { relatedMemoriesHandler, saveMemoryHandler, searchMemoriesHandler };

/** The built-in handlers of the `memory` domain, registered under their skill names. */
export const memoryHandlers: SkillHandler[] = [
  saveMemoryHandler,
  searchMemoriesHandler,
  relatedMemoriesHandler,
];
