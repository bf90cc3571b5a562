/** Where a turn stands; `paused` and `interrupted` turns can be resumed with "continue". */
export type TurnStatus = 'running' | 'completed' | 'paused' | 'interrupted' | 'failed';

/** One `dispatch_agent` call after parsing: what a sub-agent should do and with which skills. */
export type AgentSpec = {
  agentId: string;
  mission: string;
  /** Exact skill names (`email.send`) or whole domains (`email.*`). */
  skills: string[];
  context?: string;
  /** Agent ids that must complete first; their results are handed to this agent in this order. */
  dependsOn: string[];
  maxToolCalls?: number;
  model?: string;
};

export type AgentStatus = 'completed' | 'failed' | 'timeout' | 'skipped';

export type AgentResult = {
  agentId: string;
  status: AgentStatus;
  result: string;
  error?: string;
  toolCallsUsed: number;
  durationMs: number;
  /** for skipped: the failed/timed-out ancestor and why */
  skippedBecause?: string;
};

export type AgentEvent =
  | { type: 'agent_start'; agentId: string; wave: number }
  | { type: 'agent_end'; agentId: string; result: AgentResult }
  | { type: 'agent_skipped'; agentId: string; result: AgentResult };

/** Just the AgentResult fields of a richer outcome (drops transcripts and usage). */
export function plainResult(outcome: AgentResult): AgentResult {
  return {
    agentId: outcome.agentId,
    status: outcome.status,
    result: outcome.result,
    ...(outcome.error ? { error: outcome.error } : {}),
    toolCallsUsed: outcome.toolCallsUsed,
    durationMs: outcome.durationMs,
    ...(outcome.skippedBecause ? { skippedBecause: outcome.skippedBecause } : {}),
  };
}
