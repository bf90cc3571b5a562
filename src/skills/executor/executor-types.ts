import type { Database } from '../../db/index.ts';
import type { Logger } from '../../logging/index.ts';
import type { SkillCallStatus } from '../executions.ts';
import type { UnavailableDomain } from '../registry/index.ts';
import type { SkillHandler, SkillResult, SkillServices, SkillSnapshot, SkillUser } from '../types.ts';
import type { BreakerOptions } from './circuit-breaker.ts';
import type { Caller, ScopeCheck } from './scope.ts';
import type { Sentinel } from './sentinel.ts';

export type SentinelDecisionEvent = {
  executionId: string;
  turnId: string | null;
  skill: string;
  command: string;
  approved: boolean;
  reasoning: string;
  /** The calling sub-agent, or null for the orchestrator and direct calls. */
  agentId: string | null;
  userId: string;
  /** The sentinel's model, when it said. */
  model: string | null;
  /** When the review started, and how long it took (for its trace span). */
  startedAt: Date;
  durationMs: number;
};

export type ExecuteRequest = {
  command: string;
  caller: Caller;
  user: SkillUser;
  conversationId?: string | null;
  channel?: string;
  turnId?: string | null;
  /** The user's own words that started the turn, for the sentinel. */
  originalRequest?: string;
  /** The user confirmed exactly this command: skip the sentinel for this one call. */
  confirmed?: boolean;
  signal?: AbortSignal;
};

export type ExecutionOutcome = SkillResult & {
  executionId: string;
  skill: string | null;
  durationMs: number;
  /**
   * How the call is recorded: `unknown` when a mutating handler was stopped (timeout, cancel)
   * and its effect may or may not have happened; `refused` when the sentinel or scope said no.
   */
  callStatus: Exclude<SkillCallStatus, 'running'>;
  /** A mutating call that passed its checks: an effect the user gets a receipt for. */
  effect: boolean;
};

export type ExecutorOptions = {
  database: Database;
  skills: () => SkillSnapshot;
  handlers: ReadonlyMap<string, SkillHandler>;
  services: SkillServices;
  logger: Logger;
  sentinel?: Sentinel | null;
  scopeCheck?: ScopeCheck;
  defaultTimeoutMs?: number;
  maxResultChars?: number;
  breaker?: Partial<BreakerOptions>;
  /** Told of every sentinel decision (the turn's event stream). */
  onSentinelDecision?: (decision: SentinelDecisionEvent) => void;
  /**
   * Skill domains the user cannot use now (a provider not connected), each with how to fix it.
   * Their skills return that as an error result; get_skill shows it. Absent: all available.
   */
  unavailableDomains?: (userId: string) => Promise<readonly UnavailableDomain[]>;
  now?: () => Date;
  randomId?: () => string;
};
