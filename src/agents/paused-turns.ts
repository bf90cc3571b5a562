import type { Database, Queryable } from '../db/index.ts';
import { emptyUsage } from '../llm/usage.ts';
import type { Logger } from '../logging/logger.ts';
import { appendMessage } from '../memory/index.ts';
import type { SkillExecutor } from '../skills/executor/index.ts';
import type { AgentResult, AgentSpec } from './agent-types.ts';
import type { Emit } from './events.ts';
import type { AgentBoard } from './orchestrator-loop.ts';
import type { PendingConfirmation, TurnScope } from './sub-agent.ts';

import type { TurnStatus } from './turn-engine.ts';

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
  | { kind: 'interrupted'; handled?: boolean };

/**
 * Marks turns left `running` by a crash as interrupted and posts what was done into their
 * conversations. A turn whose conversation lock another live process holds is left alone.
 */
export async function recoverInterruptedTurns(database: Database, logger: Logger): Promise<number> {
  const running = await database.query<{
    id: string;
    conversation_id: string;
    user_id: string;
    content: string | null;
  }>(
    `SELECT t.id, t.conversation_id, t.user_id, m.content
     FROM turns t LEFT JOIN messages m ON m.id = t.user_message_id WHERE t.status = 'running'`,
  );
  let recovered = 0;
  for (const turn of running) {
    const done = await database.tryAdvisoryLock(`conversation:${turn.conversation_id}`, async () => {
      const claimed = await database.query(
        `UPDATE turns SET status = 'interrupted', finished_at = now(), state = $2 WHERE id = $1 AND status = 'running' RETURNING id`,
        [turn.id, JSON.stringify({ kind: 'interrupted' })],
      );
      if (claimed.length === 0) return false;
      const calls = await database.query<{ command: string }>(
        "SELECT command FROM skill_executions WHERE turn_id = $1 AND kind = 'skill' AND status = 'ok' ORDER BY started_at",
        [turn.id],
      );
      const lines = [
        `I was interrupted (Steward restarted) while working on: "${turn.content ?? 'your last request'}".`,
        calls.length
          ? `Done before it stopped:\n${calls.map((call) => `- ${call.command}`).join('\n')}`
          : 'Nothing was done yet.',
        'Reply "continue" to finish it.',
      ];
      await appendMessage(database, {
        conversationId: turn.conversation_id,
        userId: turn.user_id,
        turnId: turn.id,
        role: 'assistant',
        content: lines.join('\n'),
      });
      return true;
    });
    if (done?.value) recovered++;
  }
  if (recovered) logger.warn({ recovered }, 'marked interrupted turns');
  return recovered;
}

export async function findPausedTurn(
  database: Queryable,
  conversationId: string,
): Promise<{ id: string; state: PausedState; request: string } | null> {
  const rows = await database.query<{
    id: string;
    status: TurnStatus;
    state: PausedState | null;
    content: string | null;
  }>(
    `SELECT t.id, t.status, t.state, m.content FROM turns t LEFT JOIN messages m ON m.id = t.user_message_id
     WHERE t.conversation_id = $1 ORDER BY t.started_at DESC LIMIT 1`,
    [conversationId],
  );
  const last = rows[0];
  if (
    !last ||
    (last.status !== 'paused' && last.status !== 'interrupted') ||
    !last.state ||
    last.state.handled
  )
    return null;
  return { id: last.id, state: last.state, request: last.content ?? '' };
}

export async function markPausedTurnHandled(
  database: Queryable,
  turnId: string,
  state: PausedState,
): Promise<void> {
  await database.query('UPDATE turns SET state = $2 WHERE id = $1', [
    turnId,
    JSON.stringify({ ...state, handled: true }),
  ]);
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
    return `The user said to continue the interrupted request: "${turn.originalRequest}". Check what was already done before acting again.`;
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
