import type { ResolvedConfig } from '../config/index.ts';
import type { Database } from '../db/index.ts';
import { countSkillCallsSince } from '../skills/index.ts';

/** How many skill calls the conversation's sliding window has left, and why that bounds a turn. */
export type ConversationAllowance = { left: number; reason: string };

/**
 * The counters of one turn (DESIGN §6 limits). Shared by the orchestrator loop and every
 * sub-agent, so that the turn's totals hold however the work is split.
 */
export class TurnBudget {
  readonly maxAgents: number;
  readonly maxIterations: number;
  skillCalls = 0;
  agents = 0;
  iterations = 0;
  /** The first limit that tripped, in words; null while within limits. */
  tripped: string | null = null;

  readonly #turnMaxSkillCalls: number;
  readonly #conversationAllowance: (() => Promise<ConversationAllowance>) | undefined;
  #skillLimit: Promise<{ max: number; reason: string }> | null = null;

  constructor(limits: {
    maxSkillCalls: number;
    maxAgents: number;
    maxIterations: number;
    /** Read on the first skill call only: most turns call no skill. */
    conversationAllowance?: () => Promise<ConversationAllowance>;
  }) {
    this.#turnMaxSkillCalls = limits.maxSkillCalls;
    this.#conversationAllowance = limits.conversationAllowance;
    this.maxAgents = limits.maxAgents;
    this.maxIterations = limits.maxIterations;
  }

  /** Takes one skill call from the budget; false (and trips) when none is left. */
  async takeSkillCall(): Promise<boolean> {
    this.#skillLimit ??= this.#resolveSkillLimit();
    const { max, reason } = await this.#skillLimit;
    if (this.skillCalls >= max) {
      this.tripped ??= reason;
      return false;
    }
    this.skillCalls++;
    return true;
  }

  async #resolveSkillLimit(): Promise<{ max: number; reason: string }> {
    const turnLimit = {
      max: this.#turnMaxSkillCalls,
      reason: `the limit of ${this.#turnMaxSkillCalls} skill calls for this turn`,
    };
    const allowance = await this.#conversationAllowance?.();
    if (!allowance || allowance.left >= turnLimit.max) return turnLimit;
    return { max: Math.max(0, allowance.left), reason: allowance.reason };
  }

  takeAgent(): boolean {
    if (this.agents >= this.maxAgents) {
      this.tripped ??= `the limit of ${this.maxAgents} agents for this turn`;
      return false;
    }
    this.agents++;
    return true;
  }

  takeIteration(): boolean {
    if (this.iterations >= this.maxIterations) {
      this.tripped ??= `the limit of ${this.maxIterations} planning steps for this turn`;
      return false;
    }
    this.iterations++;
    return true;
  }
}

/** Fresh turn counters; the first skill call caps them by what the conversation's sliding window has left. */
export function turnBudgetFor(
  deps: { config: () => ResolvedConfig; now: () => Date; database: Database },
  conversationId: string,
): TurnBudget {
  const { limits } = deps.config();
  return new TurnBudget({
    maxSkillCalls: limits.turn_max_skill_calls,
    maxAgents: limits.turn_max_agents,
    maxIterations: limits.turn_max_orchestrator_iterations,
    conversationAllowance: async () => {
      const since = new Date(deps.now().getTime() - limits.conversation_window_ms);
      const used = await countSkillCallsSince(deps.database, conversationId, since);
      return {
        left: limits.conversation_max_skill_calls - used,
        reason: `the limit of ${limits.conversation_max_skill_calls} skill calls per ${Math.round(limits.conversation_window_ms / 60_000)} minutes in this conversation`,
      };
    },
  });
}
