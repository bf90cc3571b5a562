export {
  type BreakerDecision,
  type BreakerOptions,
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
  SkillExecutor,
} from './executor.ts';
export { acceptedFlags, describeFlagErrors } from './flag-errors.ts';
export type { Sentinel, SentinelDecision, SentinelRequest } from './sentinel.ts';
