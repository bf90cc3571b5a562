export {
  type AgentEnd,
  type AgentRecord,
  closeInterruptedExecutions,
  countSkillCallsSince,
  type ExecutionRow,
  executionsOfTurn,
  finishAgentRow,
  type SkillCallSummary,
  skillCallsOfTurn,
  startAgentRow,
  storableText,
} from './executions.ts';
export {
  type BreakerChange,
  type BreakerState,
  type ExecutionOutcome,
  isGranted,
  type Sentinel,
  type SentinelDecision,
  type SentinelDecisionEvent,
  type SentinelDecisionRow,
  type SentinelRequest,
  SkillExecutor,
  sentinelDecisionsOfTurn,
  unstorableCharacter,
  userBreakerKey,
} from './executor/index.ts';
export {
  cutFenced,
  defuse,
  EXTERNAL_CONTENT_RULE,
  fencedSources,
  fenceExternal,
  isOutsideSource,
} from './external.ts';
export { builtinHandlers } from './handlers/index.ts';
export { type AgentSkillPlan, type BundledFile, readAgentSkills } from './import/agent-skills.ts';
export type { ImportRisk } from './import/import-risks.ts';
export { decideImport, type ImportDecision, writeImportedSkill } from './import/write-agent-skills.ts';
export {
  type LearnedActor,
  type LearnedChange,
  LearnedSkills,
  type LearnedSkillView,
  learnedSkillsFor,
  REVIEW_MIN_FAILURES,
  REVIEW_UNUSED_DAYS,
  renderLearnedPage,
  type SkillChange,
  type SkillUse,
  type SkillVersion,
  STEWARD_AUTHOR,
  skillApiRoutes,
  skillUse,
  templateSkills,
  versionView,
} from './learned/index.ts';
export { extractCommands, formatCommand, parseCommand } from './protocol/index.ts';
export {
  type CronSchedule,
  checkSkillMentions,
  fireTimesBetween,
  formatInZone,
  getSkill,
  hideDomains,
  type InvalidSkill,
  invalidSkills,
  loadSkillRoots,
  localTime,
  nextFireTime,
  parseCron,
  parseFrontmatter,
  SkillRegistry,
  sharedSkills,
  skillMentions,
  skillNameProblem,
  skillPageSkeleton,
  skillsVisibleTo,
  type UnavailableDomain,
  validateSkillDir,
  zoneOffsetMinutes,
} from './registry/index.ts';
export type {
  DomainIndex,
  ProvidedSkills,
  SkillDefinition,
  SkillHandler,
  SkillProvider,
  SkillResult,
  SkillServices,
  SkillSnapshot,
} from './types.ts';
export { fail, ok } from './types.ts';
