import type { Queryable } from '../db/index.ts';
import type { ChatMessage } from '../llm/index.ts';
import { emptyUsage, type Usage } from '../llm/index.ts';
import type { StoredMessage } from '../memory/index.ts';
import { type AgentRecordRow, agentRecordsOfTurn, fenceExternal } from '../skills/index.ts';
import type { AgentCall, AgentSpec, AgentStatus } from './agent-types.ts';
import { MAY_HAVE_HAPPENED } from './dag-scheduler.ts';
import { parseDispatchArgs } from './dispatch-validation.ts';
import type { AgentBoard } from './orchestrator-loop.ts';
import type { SubAgentOutcome } from './sub-agent.ts';

/*
 * A turn's agents rebuilt from what was stored, for a turn that runs again after a crash (or
 * the turn that continues an interrupted one): the model was told "Queued agent X", so X must
 * still be on the board — queued if it never started, with its recorded outcome if it ended,
 * and `interrupted` (with the calls it had made) if Steward stopped while it ran.
 */

/** The dispatch_agent calls of `messages` that were answered "Queued agent …", in order. */
export function dispatchedSpecs(messages: readonly StoredMessage[]): AgentSpec[] {
  const results = new Map<string, string>();
  for (const message of messages) {
    if (message.role === 'tool' && message.toolCallId) results.set(message.toolCallId, message.content);
  }
  const specs: AgentSpec[] = [];
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    for (const call of message.toolCalls ?? []) {
      if (call.name !== 'dispatch_agent' || !results.get(call.id)?.startsWith('Queued agent ')) continue;
      const parsed = parseDispatchArgs(call.arguments);
      if (parsed.ok) specs.push(parsed.spec);
    }
  }
  return specs;
}

/** What the model is told about an agent that Steward stopped while it ran. */
export function interruptedAgentResult(agentId: string, calls: readonly AgentCall[]): string {
  const finished = calls.filter((call) => call.status !== 'unknown');
  const unknown = calls.filter((call) => call.status === 'unknown');
  const list = (items: readonly AgentCall[]) =>
    fenceExternal(`agent:${agentId}`, items.map((call) => `${call.command} (${call.status})`).join('\n'));
  return [
    'Interrupted: Steward restarted while this agent was running. It never finished its mission and reported nothing.',
    finished.length ? `Skill calls it had finished:\n${list(finished)}` : 'It had finished no skill call.',
    unknown.length ? `These were running when it stopped and ${MAY_HAVE_HAPPENED}:\n${list(unknown)}` : '',
    'To finish the work, check what is already done, then dispatch a new agent (with a new agent_id).',
  ]
    .filter(Boolean)
    .join('\n');
}

function outcomeOf(row: AgentRecordRow): SubAgentOutcome {
  const calls: AgentCall[] = row.calls.map((call) => ({
    command: call.command,
    skill: call.skill,
    status: call.status === 'running' ? 'unknown' : call.status,
    mutating: call.mutating,
  }));
  const usage = (row.usage ?? {}) as Partial<Usage> & { toolCallsUsed?: number };
  const stopped = row.status === 'interrupted' || row.status === 'running';
  const status = (stopped ? 'interrupted' : row.status) as AgentStatus;
  return {
    agentId: row.agentId,
    status,
    result: stopped ? interruptedAgentResult(row.agentId, calls) : (row.result ?? ''),
    ...(stopped
      ? { error: 'interrupted by a restart' }
      : row.status === 'skipped'
        ? { skippedBecause: row.error ?? '' }
        : row.error
          ? { error: row.error }
          : {}),
    toolCallsUsed: usage.toolCallsUsed ?? calls.length,
    durationMs: row.durationMs ?? 0,
    ...(calls.length ? { calls } : {}),
    // An agent that finished can be sent a follow-up (message_agent) from its stored transcript.
    executionId: stopped || row.status === 'skipped' ? '' : row.id,
    transcript: Array.isArray(row.transcript) ? (row.transcript as ChatMessage[]) : [],
    usage: { ...emptyUsage(), ...usage },
    confirmation: null,
  };
}

function specOf(row: AgentRecordRow): AgentSpec {
  return {
    agentId: row.agentId,
    mission: row.mission,
    skills: row.spec?.skills ?? [],
    dependsOn: row.dependsOn,
    ...(row.spec?.context ? { context: row.spec.context } : {}),
    ...(row.spec?.model ? { model: row.spec.model } : {}),
  };
}

/**
 * Puts on `board` the agents of turn `turnId`: every agent its stored messages dispatched, and
 * every agent row it has (the latest row of an agent id wins). Agents with no row stay queued
 * for the next get_agent_results. Returns how many agents it put on the board.
 */
export async function restoreBoardFromRecords(
  database: Queryable,
  board: AgentBoard,
  turn: { turnId: string; messages: readonly StoredMessage[] },
): Promise<number> {
  const rows = await agentRecordsOfTurn(database, turn.turnId);
  const specs = dispatchedSpecs(turn.messages);
  for (const spec of specs) if (!board.specs.has(spec.agentId)) board.specs.set(spec.agentId, spec);
  for (const row of rows) {
    if (!row.agentId) continue;
    if (!board.specs.has(row.agentId)) board.specs.set(row.agentId, specOf(row));
    board.outcomes.set(row.agentId, outcomeOf(row));
  }
  return new Set([...specs.map((spec) => spec.agentId), ...rows.map((row) => row.agentId)]).size;
}
