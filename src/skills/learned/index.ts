export { skillApiRoutes, versionView } from './api-routes.ts';
export { type LearnedPageFields, renderLearnedPage, STEWARD_AUTHOR } from './learned-page.ts';
export {
  type LearnedActor,
  type LearnedChange,
  LearnedSkills,
  type LearnedSkillsOptions,
  type LearnedSkillView,
  REVIEW_MIN_FAILURES,
  REVIEW_UNUSED_DAYS,
} from './learned-skills.ts';
export { learnedSkillsFor } from './learned-skills-for.ts';
export { lineDiff } from './line-diff.ts';
export type { SkillChange, SkillVersion } from './skill-ledger.ts';
export { type SkillUse, skillOwners, skillUse, templateSkills } from './skill-use.ts';
