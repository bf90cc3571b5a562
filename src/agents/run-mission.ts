import type { ResolvedConfig } from '../config/index.ts';
import type { AgentSpec } from './agent-types.ts';
import type { Emit } from './events.ts';
import type { AgentBoard, LoopOutcome } from './orchestrator-loop.ts';
import { runSubAgent, type SubAgentDeps, type TurnScope } from './sub-agent.ts';
import type { TurnBudget } from './turn-budget.ts';

/** A turn that runs one sub-agent on a fixed mission instead of the orchestrator (a workflow run). */
export type TurnMission = {
  /** The agent's mission: a workflow page's body. */
  text: string;
  /** Exactly the skills it may run. */
  skills: string[];
  /** Names the agent in traces (default `mission`). */
  agentId?: string;
};

/**
 * Runs the mission's sub-agent under the turn's limits, breakers and sentinel. Its final text
 * is the turn's reply; a sentinel refusal pauses the turn for the user's confirmation.
 * Never throws for model or skill failures.
 */
export async function runMission(
  deps: Omit<SubAgentDeps, 'emit'> & { config: () => ResolvedConfig },
  input: {
    mission: TurnMission;
    scope: TurnScope;
    board: AgentBoard;
    budget: TurnBudget;
    emit: Emit;
    signal: AbortSignal;
  },
): Promise<LoopOutcome> {
  const { limits } = deps.config();
  const spec: AgentSpec = {
    agentId: input.mission.agentId ?? 'mission',
    mission: input.mission.text,
    skills: input.mission.skills,
    dependsOn: [],
  };
  input.board.specs.set(spec.agentId, spec);
  if (!input.budget.takeAgent()) return { kind: 'limit', reason: input.budget.tripped! };
  input.emit({
    type: 'agent_dispatched',
    agentId: spec.agentId,
    mission: spec.mission,
    skills: spec.skills,
    dependsOn: [],
  });
  input.emit({ type: 'agent_start', agentId: spec.agentId, wave: 0 });
  const outcome = await runSubAgent(
    {
      llm: deps.llm,
      executor: deps.executor,
      skills: deps.skills,
      database: deps.database,
      logger: deps.logger,
      now: deps.now,
      emit: input.emit,
    },
    {
      spec,
      dependencyResults: [],
      turn: input.scope,
      budget: input.budget,
      defaultMaxToolCalls: limits.sub_agent_max_tool_calls,
      timeoutMs: limits.sub_agent_timeout_ms,
      signal: input.signal,
    },
  );
  input.board.outcomes.set(spec.agentId, outcome);
  input.emit({
    type: 'agent_end',
    agentId: spec.agentId,
    status: outcome.status,
    result: outcome.result,
    ...(outcome.error ? { error: outcome.error } : {}),
  });
  if (outcome.confirmation)
    return { kind: 'confirmation', pending: outcome.confirmation, text: outcome.result };
  if (outcome.status !== 'completed')
    return {
      kind: 'error',
      error: outcome.error ?? (outcome.result || `the agent ended with ${outcome.status}`),
    };
  // The turn stores the reply (with its receipts) when it finishes.
  return { kind: 'reply', text: outcome.result };
}
