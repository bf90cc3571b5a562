/**
 * The counters of one turn (DESIGN §6 limits). Shared by the orchestrator loop and every
 * sub-agent, so that the turn's totals hold however the work is split.
 */
export class TurnBudget {
  readonly maxSkillCalls: number;
  readonly maxAgents: number;
  readonly maxIterations: number;
  skillCalls = 0;
  agents = 0;
  iterations = 0;
  /** The first limit that tripped, in words; null while within limits. */
  tripped: string | null = null;

  readonly #skillLimitReason: string;

  constructor(limits: {
    maxSkillCalls: number;
    maxAgents: number;
    maxIterations: number;
    skillLimitReason?: string;
  }) {
    this.maxSkillCalls = limits.maxSkillCalls;
    this.#skillLimitReason =
      limits.skillLimitReason ?? `the limit of ${limits.maxSkillCalls} skill calls for this turn`;
    this.maxAgents = limits.maxAgents;
    this.maxIterations = limits.maxIterations;
  }

  /** Takes one skill call from the budget; false (and trips) when none is left. */
  takeSkillCall(): boolean {
    if (this.skillCalls >= this.maxSkillCalls) {
      this.tripped ??= this.#skillLimitReason;
      return false;
    }
    this.skillCalls++;
    return true;
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
