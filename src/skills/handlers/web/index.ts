import type { SkillHandler } from '../../types.ts';
import { webFetchHandler } from './fetch.ts';
import { webSearchHandler } from './search.ts';

/** The built-in handlers of the `web` domain. */
export const webHandlers: SkillHandler[] = [webSearchHandler, webFetchHandler] as SkillHandler[];
