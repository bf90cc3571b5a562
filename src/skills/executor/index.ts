export {
  type BreakerChange,
  type BreakerDecision,
  type BreakerOptions,
  type BreakerState,
  CircuitBreakers,
  DEFAULT_BREAKER,
} from './circuit-breaker.ts';
export {
  type Caller,
  defaultScopeCheck,
  type ExecuteRequest,
  type ExecutionOutcome,
  type ExecutorOptions,
  isGranted,
  type ScopeCheck,
  type SentinelDecisionEvent,
  SkillExecutor,
  userBreakerKey,
} from './executor.ts';
export { type FailureKind, failureKind, unstorableCharacter } from './failure-kind.ts';
export { acceptedFlags, describeFlagErrors } from './flag-errors.ts';
export type { Sentinel, SentinelDecision, SentinelRequest } from './sentinel.ts';
export {
  recordSentinelDecision,
  type SentinelDecisionRow,
  type StoredSentinelDecision,
  sentinelDecisionsOfTurn,
} from './sentinel-decisions.ts';
