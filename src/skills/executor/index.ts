export {
  type BreakerChange,
  type BreakerDecision,
  type BreakerOptions,
  type BreakerState,
  CircuitBreakers,
  DEFAULT_BREAKER,
} from './circuit-breaker.ts';
export { disabledSkills, isSkillDisabled, setSkillEnabled } from './disabled-skills.ts';
export { SkillExecutor, userBreakerKey } from './executor.ts';
export type {
  ExecuteRequest,
  ExecutionOutcome,
  ExecutorOptions,
  SentinelDecisionEvent,
} from './executor-types.ts';
export { type FailureKind, failureKind, unstorableCharacter } from './failure-kind.ts';
export { acceptedFlags, describeFlagErrors } from './flag-errors.ts';
export { type Caller, defaultScopeCheck, isGranted, type ScopeCheck } from './scope.ts';
export type { Sentinel, SentinelDecision, SentinelRequest } from './sentinel.ts';
export {
  recordSentinelDecision,
  type SentinelDecisionRow,
  type StoredSentinelDecision,
  sentinelDecisionsOfTurn,
} from './sentinel-decisions.ts';
