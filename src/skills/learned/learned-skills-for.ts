import type { SkillServices } from '../types.ts';
import { LearnedSkills } from './learned-skills.ts';

/**
 * The learned skills of a running Steward, from its skill services (the user skills directory
 * and the database), or null when it has no user skills directory. Cheap: holds no state.
 */
export function learnedSkillsFor(services: SkillServices): LearnedSkills | null {
  const where = services.workflows;
  if (!where) return null;
  return new LearnedSkills({
    database: services.database,
    skillsDir: where.skillsDir,
    builtinDir: where.builtinDir,
    skills: where.skills,
    ...(where.reload ? { reload: where.reload } : {}),
  });
}
