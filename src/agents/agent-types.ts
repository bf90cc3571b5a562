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

/** `interrupted`: Steward stopped (a crash, a restart) while the agent ran; it never finished. */
export type AgentStatus = 'completed' | 'failed' | 'timeout' | 'skipped' | 'interrupted';

/** One skill call an agent made, as recorded: `unknown` may or may not have happened. */
export type AgentCall = {
  command: string;
  /** The skill the command named (null when it did not parse). */
  skill: string | null;
  status: 'ok' | 'error' | 'refused' | 'timeout' | 'unknown';
  /** It changes data (its outcome matters to the user). */
  mutating: boolean;
};

export type AgentResult = {
  agentId: string;
  status: AgentStatus;
  result: string;
  error?: string;
  toolCallsUsed: number;
  durationMs: number;
  /** for skipped: the failed/timed-out ancestor and why */
  skippedBecause?: string;
  /** The skill calls it made, from the execution records (what the model is shown beside its text). */
  calls?: AgentCall[];
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
    ...(outcome.calls?.length ? { calls: outcome.calls } : {}),
  };
}
