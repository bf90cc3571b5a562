export { closestDomains, closestSkills } from './closest-skills.ts';
export { type CronSchedule, fireTimesBetween, nextFireTime, parseCron } from './cron-schedule.ts';
export { type GetSkillRequest, getSkill, skillHelp, skillPage, type UnavailableDomain } from './get-skill.ts';
export { hideDomains } from './hide-domains.ts';
export { type InvalidSkill, invalidSkills } from './invalid-skills.ts';
export {
  generatedIndex,
  type LoadSkillRootsOptions,
  loadSkillRoots,
  type SkillRoot,
} from './load-skill-roots.ts';
export { type DocumentedFlag, parseFlagsSection } from './parse-flags-section.ts';
export { parseFrontmatter } from './parse-frontmatter.ts';
export { type SkillMatch, searchSkills } from './search-skills.ts';
export { checkSkillMentions, skillMentions } from './skill-mentions.ts';
export { RESERVED_ACTIONS, skillNameProblem } from './skill-name.ts';
export { skillPageSkeleton } from './skill-page-skeleton.ts';
export { type SkillChangeListener, SkillRegistry, type SkillRegistryOptions } from './skill-registry.ts';
export { validateSkillDir } from './validate-skill-dir.ts';
export { isVisibleTo, sharedSkills, skillsVisibleTo } from './visible-skills.ts';
