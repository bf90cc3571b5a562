import type { Usage } from '../llm/index.ts';
import type { ExecutionOutcome } from '../skills/index.ts';
import type { AgentStatus } from './agent-types.ts';
import type { Receipt } from './receipts.ts';

/**
 * Everything that happens in a turn, as one union. The trace API, the SSE stream and the
 * logs all read these.
 */
export type TurnEvent =
  | { type: 'turn_start'; turnId: string; conversationId: string; mode: string; resumed: boolean }
  | { type: 'llm_call'; role: string; model: string; usage: Usage; latencyMs: number; agentId: string | null }
  | { type: 'tool_call'; name: string; arguments: Record<string, unknown> }
  | { type: 'agent_dispatched'; agentId: string; mission: string; skills: string[]; dependsOn: string[] }
  | { type: 'agent_start'; agentId: string; wave: number }
  | { type: 'agent_end'; agentId: string; status: AgentStatus; result: string; error?: string }
  | {
      type: 'skill_call_end';
      agentId: string | null;
      command: string;
      /** The skill the command named, when it parsed (null for unparsable commands). */
      skill?: string | null;
      status: 'ok' | 'error';
      durationMs: number;
      executionId: string;
    }
  | { type: 'text_delta'; text: string }
  | { type: 'limit'; limit: string; detail: string }
  | {
      type: 'turn_end';
      turnId: string;
      status: string;
      reply: string;
      usage: Usage;
      /** What the turn did, from its execution records. */
      receipts: Receipt[];
    };

export type Emit = (event: TurnEvent) => void;

export const noEmit: Emit = () => {};

/** Emits a finished skill call as `skill_call_end`. */
export function emitSkillCall(
  emit: Emit,
  outcome: ExecutionOutcome,
  command: string,
  agentId: string | null,
): void {
  emit({
    type: 'skill_call_end',
    agentId,
    command,
    skill: outcome.skill,
    status: outcome.status,
    durationMs: outcome.durationMs,
    executionId: outcome.executionId,
  });
}
