import type { SkillDefinition } from '../types.ts';

export type SentinelRequest = {
  /** The user's own words that started the turn. */
  originalRequest: string;
  /** The calling sub-agent's mission (null for direct calls). */
  mission: string | null;
  command: string;
  skill: SkillDefinition;
  userId: string;
  turnId: string | null;
  executionId: string;
  signal: AbortSignal;
};

export type SentinelDecision = { approved: boolean; reasoning: string; model?: string };

/**
 * Independent check of a `confirm` skill call. Sees only the original request, the mission
 * and the proposed command. Must not throw: an unreachable or unparsable judge is a refusal.
 */
export interface Sentinel {
  review(request: SentinelRequest): Promise<SentinelDecision>;
}
