import type { Queryable } from '../../db/index.ts';
import { storableText } from '../executions.ts';
import type { SentinelDecision } from './sentinel.ts';

export type StoredSentinelDecision = {
  executionId: string;
  turnId: string | null;
  userId: string;
  skill: string;
  command: string;
  mission: string | null;
  originalRequest: string | null;
  decision: SentinelDecision;
};

/** Every sentinel decision is kept with its reasoning (`sentinel_decisions`, owned by skills/). */
export async function recordSentinelDecision(db: Queryable, entry: StoredSentinelDecision): Promise<void> {
  await db.query(
    `INSERT INTO sentinel_decisions (execution_id, turn_id, user_id, skill, command, mission, original_request, approved, reasoning, model)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      entry.executionId,
      entry.turnId,
      entry.userId,
      entry.skill,
      storableText(entry.command),
      entry.mission === null ? null : storableText(entry.mission),
      entry.originalRequest === null ? null : storableText(entry.originalRequest),
      entry.decision.approved,
      storableText(entry.decision.reasoning),
      entry.decision.model ?? null,
    ],
  );
}

export type SentinelDecisionRow = {
  executionId: string | null;
  skill: string;
  command: string;
  approved: boolean;
  reasoning: string;
  model: string | null;
  createdAt: Date;
};

/** A turn's sentinel decisions, oldest first (the trace shows them). */
export async function sentinelDecisionsOfTurn(db: Queryable, turnId: string): Promise<SentinelDecisionRow[]> {
  const rows = await db.query<{
    execution_id: string | null;
    skill: string;
    command: string;
    approved: boolean;
    reasoning: string;
    model: string | null;
    created_at: Date;
  }>(
    `SELECT execution_id, skill, command, approved, reasoning, model, created_at
     FROM sentinel_decisions WHERE turn_id = $1 ORDER BY id`,
    [turnId],
  );
  return rows.map((row) => ({
    executionId: row.execution_id,
    skill: row.skill,
    command: row.command,
    approved: row.approved,
    reasoning: row.reasoning,
    model: row.model,
    createdAt: new Date(row.created_at),
  }));
}
