import type { SkillHandler } from '../../types.ts';
import { listSkillsHandler } from './list.ts';
import { retireSkillHandler } from './retire.ts';
import { updateSkillHandler } from './update.ts';
import { writeSkillHandler } from './write.ts';

export const skillHandlers: SkillHandler[] = [
  writeSkillHandler,
  updateSkillHandler,
  retireSkillHandler,
  listSkillsHandler,
];
