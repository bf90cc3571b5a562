import type { Database, Queryable } from '../db/index.ts';
import { emptyUsage } from '../llm/index.ts';
import { appendMessage } from '../memory/index.ts';
import {
  closeInterruptedExecutions,
  type SkillCallSummary,
  type SkillExecutor,
  skillCallsOfTurn,
} from '../skills/index.ts';
import type { AgentResult, AgentSpec } from './agent-types.ts';
import type { Emit } from './events.ts';
import type { AgentBoard } from './orchestrator-loop.ts';
import { receiptsJson, recordedReceipts, withReceiptLines } from './receipts.ts';
import type { PendingConfirmation, TurnScope } from './sub-agent.ts';
import { interruptTurn, latestStartedTurn, requeueTurn, setTurnState, type TurnRecord } from './turns.ts';

/* Turns that stopped short (a tripped limit, a needed confirmation, a crash) and how they resume. */

/** What a paused turn keeps for the turn that resumes it. */
export type PausedState =
  | { kind: 'limit'; specs: AgentSpec[]; results: AgentResult[]; handled?: boolean }
  | {
      kind: 'confirmation';
      pending: PendingConfirmation;
      specs: AgentSpec[];
      results: AgentResult[];
      handled?: boolean;
    }
  | { kind: 'interrupted'; done: string[]; uncertain: string[]; handled?: boolean };

/** Why a turn stopped before its end. */
export type InterruptionCause = 'restart' | 'cancelled' | 'shutdown';

/** The message a stopped turn leaves: what was done, what may have happened, how to go on. */
export function interruptionNote(
  request: string,
  calls: readonly SkillCallSummary[],
  cause: InterruptionCause,
): { text: string; state: PausedState } {
  const done = calls.filter((call) => call.status === 'ok').map((call) => call.command);
  const uncertain = calls.filter((call) => call.status === 'unknown').map((call) => call.command);
  const why =
    cause === 'cancelled'
      ? 'You cancelled'
      : cause === 'shutdown'
        ? 'I was interrupted (Steward shut down)'
        : 'I was interrupted (Steward restarted)';
  const lines = [`${why} while working on: "${request || 'your last request'}".`];
  lines.push(
    done.length
      ? `Done before it stopped:\n${done.map((c) => `- ${c}`).join('\n')}`
      : 'Nothing was done yet.',
  );
  if (uncertain.length) {
    lines.push(`May have happened — check before repeating:\n${uncertain.map((c) => `- ${c}`).join('\n')}`);
  }
  lines.push('Reply "continue" to finish it.');
  return { text: lines.join('\n'), state: { kind: 'interrupted', done, uncertain } };
}

export type OrphanRecovery = 'requeued' | 'interrupted' | 'gone';

/**
 * Recovers a turn left `running` by an instance that died (call under the conversation lock).
 * Its open execution rows are closed (agents interrupted, skill calls `unknown`). A turn that
 * had run no skill goes back to the queue to run again from where it was; one that had is
 * marked interrupted, with a note in its conversation listing what was done and what may
 * have happened.
 */
export async function recoverOrphanedTurn(
  database: Database,
  turn: TurnRecord,
  /** End the note with the turn's receipt lines (`replies.receipts` for the turn's channel). */
  receiptLines: boolean,
): Promise<OrphanRecovery> {
  const uncertain = await closeInterruptedExecutions(database, turn.id);
  const calls = await skillCallsOfTurn(database, turn.id);
  if (calls.length === 0 && uncertain.length === 0) {
    return (await requeueTurn(database, turn.id)) ? 'requeued' : 'gone';
  }
  const note = interruptionNote(turn.request, calls, 'restart');
  const receipts = await recordedReceipts(database, turn.id);
  const text = receiptLines ? withReceiptLines(note.text, receipts) : note.text;
  if (!(await interruptTurn(database, turn.id, note.state, text, receiptsJson(receipts)))) return 'gone';
  await appendMessage(database, {
    conversationId: turn.conversationId,
    userId: turn.userId,
    turnId: turn.id,
    role: 'assistant',
    content: text,
  });
  return 'interrupted';
}

export async function findPausedTurn(
  database: Queryable,
  conversationId: string,
  /** The conversation's latest ended turn when the caller has read it already (under its lock). */
  latestEnded?: TurnRecord | null,
): Promise<{ id: string; state: PausedState; request: string } | null> {
  const last = latestEnded !== undefined ? latestEnded : await latestStartedTurn(database, conversationId);
  if (!last || (last.status !== 'paused' && last.status !== 'interrupted')) return null;
  const state = last.state as PausedState | null;
  if (!state || state.handled) return null;
  return { id: last.id, state, request: last.request };
}

export async function markPausedTurnHandled(
  database: Queryable,
  turnId: string,
  state: PausedState,
): Promise<void> {
  await setTurnState(database, turnId, { ...state, handled: true });
}

/** What the orchestrator is told when a paused turn resumes; runs a confirmed command once. */
export async function resumeNote(
  executor: SkillExecutor,
  state: PausedState,
  turn: TurnScope,
  emit: Emit,
): Promise<string | null> {
  if (state.kind === 'limit') {
    return 'The user said to continue. Go on from where you stopped; do not redo work that is already done (see the results above).';
  }
  if (state.kind === 'interrupted') {
    const uncertain = state.uncertain ?? [];
    return [
      `The user said to continue the interrupted request: "${turn.originalRequest}".`,
      state.done?.length ? `Already done (do not repeat): ${state.done.join('; ')}.` : '',
      uncertain.length
        ? `These were running when it stopped and may or may not have happened: ${uncertain.join('; ')}. Check (search/get) before doing any of them again.`
        : '',
      'Check what was already done before acting again.',
    ]
      .filter(Boolean)
      .join(' ');
  }
  const pending = state.pending;
  const outcome = await executor.execute({
    command: pending.command,
    caller: pending.agentId
      ? {
          kind: 'agent',
          agentId: pending.agentId,
          grantedSkills: pending.skills,
          mission: pending.mission,
          parentExecutionId: null,
        }
      : { kind: 'orchestrator', allowMutating: true },
    user: { id: turn.userId, timezone: turn.timezone },
    conversationId: turn.conversationId,
    channel: turn.channel,
    turnId: turn.turnId,
    originalRequest: turn.originalRequest,
    confirmed: true,
  });
  emit({
    type: 'skill_call_end',
    agentId: pending.agentId || null,
    command: pending.command,
    skill: outcome.skill,
    status: outcome.status,
    durationMs: outcome.durationMs,
    executionId: outcome.executionId,
  });
  return `The user confirmed. The command ${pending.command} was run once, with result (${outcome.status}):\n${outcome.content}\nFinish the request; do not run that command again.`;
}

/** Completed agents of a paused turn stay done; the rest may be re-dispatched or run. */
export function restoreBoard(board: AgentBoard, state: PausedState): void {
  if (state.kind === 'interrupted') return;
  const completed = new Map(
    state.results.filter((result) => result.status === 'completed').map((r) => [r.agentId, r]),
  );
  for (const spec of state.specs) {
    const result = completed.get(spec.agentId);
    if (!result) continue;
    board.specs.set(spec.agentId, spec);
    board.outcomes.set(spec.agentId, {
      ...result,
      executionId: '',
      transcript: [],
      usage: emptyUsage(),
      confirmation: null,
    });
  }
  // Agents that never ran (queued when the limit tripped) stay queued for get_agent_results.
  for (const spec of state.specs) {
    const result = state.results.find((r) => r.agentId === spec.agentId);
    if (!result) board.specs.set(spec.agentId, spec);
  }
}
