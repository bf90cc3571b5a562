import type { Queryable } from '../db/index.ts';

/*
 * The execution log (`skill_executions`, owned by this folder): one row per skill call and one
 * per sub-agent, parent = the agent's row. A skill call is recorded as `running` before its
 * handler starts and completed after, so a crash in between leaves a row that says the effect
 * may have happened — recovery reports it instead of repeating it.
 */

export type SkillCallStatus = 'running' | 'ok' | 'error' | 'refused' | 'timeout' | 'unknown';
export type AgentRowStatus = 'running' | 'completed' | 'failed' | 'timeout' | 'skipped' | 'interrupted';

export type ExecutionRecord = {
  id: string;
  parentId: string | null;
  turnId: string | null;
  userId: string;
  conversationId: string | null;
  agentId: string | null;
  mission: string | null;
  skill: string | null;
  command: string;
  flags: unknown;
  /**
   * For a mutating call: the identifying detail of its receipt (`Alpha plan`), from the command's
   * main flag until the handler gives a better one. Null for read-only calls.
   */
  receipt: string | null;
};

export type ExecutionRow = {
  id: string;
  parentId: string | null;
  kind: 'agent' | 'skill';
  agentId: string | null;
  mission: string | null;
  skill: string | null;
  command: string | null;
  flags: unknown;
  dependsOn: string[];
  status: string;
  result: string | null;
  error: string | null;
  usage: unknown;
  startedAt: Date;
  finishedAt: Date | null;
  durationMs: number | null;
  receipt: string | null;
};

type Row = {
  id: string;
  parent_id: string | null;
  kind: 'agent' | 'skill';
  agent_id: string | null;
  mission: string | null;
  skill: string | null;
  command: string | null;
  flags: unknown;
  depends_on: string[] | null;
  status: string;
  result: string | null;
  error: string | null;
  usage: unknown;
  started_at: Date;
  finished_at: Date | null;
  duration_ms: number | null;
  receipt: string | null;
};

/** Postgres text cannot hold NUL; lone surrogates would not survive UTF-8. Stored text is made safe. */
export function storableText(text: string): string {
  return text.replace(/\0/g, '\uFFFD').toWellFormed();
}

const storable = (value: string | null): string | null => (value === null ? null : storableText(value));

/** Records a skill call before its handler runs (status `running`). */
export async function startSkillCall(db: Queryable, record: ExecutionRecord, startedAt: Date): Promise<void> {
  await db.query(
    `INSERT INTO skill_executions
       (id, parent_id, turn_id, user_id, conversation_id, kind, agent_id, mission, skill, command, flags, status, started_at, receipt)
     VALUES ($1, $2, $3, $4, $5, 'skill', $6, $7, $8, $9, $10, 'running', $11, $12)`,
    [...skillRowValues(record), startedAt, storable(record.receipt)],
  );
}

/** `$1`…`$10` of a skill row: the columns every row starts with, then skill, command and flags. */
function skillRowValues(record: ExecutionRecord): unknown[] {
  return [
    ...rowStart(record),
    record.skill,
    storableText(record.command),
    record.flags === null ? null : storableText(JSON.stringify(record.flags)),
  ];
}

/** `$1`…`$7` of every row: id, parent_id, turn_id, user_id, conversation_id, agent_id, mission. */
function rowStart(
  record: Pick<ExecutionRecord, 'id' | 'turnId' | 'userId' | 'conversationId' | 'agentId' | 'mission'> & {
    parentId?: string | null;
  },
): unknown[] {
  return [
    record.id,
    record.parentId ?? null,
    record.turnId,
    record.userId,
    record.conversationId,
    record.agentId,
    storable(record.mission),
  ];
}

export type SkillCallEnd = {
  status: Exclude<SkillCallStatus, 'running'>;
  result: string | null;
  error: string | null;
  durationMs: number;
  /** The handler's own identifying detail for the receipt (replaces the one from the flags). */
  receipt?: string | null;
};

/** Completes a call recorded by `startSkillCall`. */
export async function finishSkillCall(
  db: Queryable,
  id: string,
  startedAt: Date,
  end: SkillCallEnd,
): Promise<void> {
  await db.query(
    `UPDATE skill_executions SET status = $2, result = $3, error = $4, finished_at = $5, duration_ms = $6,
       receipt = CASE WHEN receipt IS NULL THEN NULL ELSE COALESCE($7, receipt) END
     WHERE id = $1`,
    [
      id,
      end.status,
      storable(end.result),
      storable(end.error),
      new Date(startedAt.getTime() + end.durationMs),
      end.durationMs,
      storable(end.receipt ?? null),
    ],
  );
}

/** Records a call that ended before any handler ran (bad command, out of scope, refused): one insert. */
export async function recordSkillCall(
  db: Queryable,
  record: ExecutionRecord,
  startedAt: Date,
  end: SkillCallEnd,
): Promise<void> {
  await db.query(
    `INSERT INTO skill_executions
       (id, parent_id, turn_id, user_id, conversation_id, kind, agent_id, mission, skill, command, flags, status, result, error, started_at, finished_at, duration_ms, receipt)
     VALUES ($1, $2, $3, $4, $5, 'skill', $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
    [
      ...skillRowValues(record),
      end.status,
      storable(end.result),
      storable(end.error),
      startedAt,
      new Date(startedAt.getTime() + end.durationMs),
      end.durationMs,
      storable(end.receipt ?? record.receipt),
    ],
  );
}

export type AgentRecord = {
  id: string;
  turnId: string;
  userId: string;
  conversationId: string;
  agentId: string;
  mission: string;
  spec: { skills: string[]; context: string | null; model: string | null };
  dependsOn: string[];
};

export async function startAgentRow(db: Queryable, record: AgentRecord): Promise<void> {
  await db.query(
    `INSERT INTO skill_executions (id, parent_id, turn_id, user_id, conversation_id, kind, agent_id, mission, flags, depends_on, status)
     VALUES ($1, $2, $3, $4, $5, 'agent', $6, $7, $8, $9, 'running')`,
    agentRowValues(record),
  );
}

/** `$1`…`$9` of an agent row: the columns every row starts with (no parent), then flags and depends_on. */
function agentRowValues(record: AgentRecord): unknown[] {
  return [...rowStart(record), storableText(JSON.stringify(record.spec)), JSON.stringify(record.dependsOn)];
}

export type AgentEnd = {
  status: AgentRowStatus;
  result: string;
  error: string | null;
  transcript: unknown;
  usage: unknown;
  durationMs: number;
};

/** Completes an agent row; a follow-up (message_agent) adds its duration to the first run's. */
export async function finishAgentRow(db: Queryable, id: string, end: AgentEnd): Promise<void> {
  await db.query(
    `UPDATE skill_executions SET status = $2, result = $3, error = $4, transcript = $5, usage = $6,
       finished_at = now(), duration_ms = COALESCE(duration_ms, 0) + $7
     WHERE id = $1`,
    [
      id,
      end.status,
      storableText(end.result),
      storable(end.error),
      storableText(JSON.stringify(end.transcript)),
      JSON.stringify(end.usage),
      end.durationMs,
    ],
  );
}

/** Skill calls a conversation made since `since` (the sliding-window limit). */
export async function countSkillCallsSince(
  db: Queryable,
  conversationId: string,
  since: Date,
): Promise<number> {
  const rows = await db.query<{ used: number }>(
    "SELECT count(*)::int AS used FROM skill_executions WHERE conversation_id = $1 AND kind = 'skill' AND started_at > $2",
    [conversationId, since],
  );
  return rows[0]?.used ?? 0;
}

export type SkillCallSummary = { command: string; status: string; skill: string | null };

/** A turn's skill calls in order; `direct` = only the orchestrator's own (no parent agent). */
export async function skillCallsOfTurn(
  db: Queryable,
  turnId: string,
  options: { direct?: boolean } = {},
): Promise<SkillCallSummary[]> {
  return db.query<SkillCallSummary>(
    `SELECT command, status, skill FROM skill_executions
     WHERE turn_id = $1 AND kind = 'skill' AND ($2::boolean IS NOT TRUE OR parent_id IS NULL)
     ORDER BY started_at, id`,
    [turnId, options.direct ?? false],
  );
}

/** Every execution row of a turn (agents and skill calls), in start order: the trace. */
export async function executionsOfTurn(db: Queryable, turnId: string): Promise<ExecutionRow[]> {
  const rows = await db.query<Row>(
    `SELECT id, parent_id, kind, agent_id, mission, skill, command, flags, depends_on, status, result, error, usage,
            started_at, finished_at, duration_ms, receipt
     FROM skill_executions WHERE turn_id = $1 ORDER BY started_at, id`,
    [turnId],
  );
  return rows.map((row) => ({
    id: row.id,
    parentId: row.parent_id,
    kind: row.kind,
    agentId: row.agent_id,
    mission: row.mission,
    skill: row.skill,
    command: row.command,
    flags: row.flags,
    dependsOn: row.depends_on ?? [],
    status: row.status,
    result: row.result,
    error: row.error,
    usage: row.usage,
    startedAt: new Date(row.started_at),
    finishedAt: row.finished_at ? new Date(row.finished_at) : null,
    durationMs: row.duration_ms,
    receipt: row.receipt,
  }));
}

/**
 * After a crash: a turn's rows still `running` are closed. Agents become `interrupted`; skill
 * calls become `unknown` (the handler may or may not have committed its effect). Returns the
 * skill calls so closed, for the user to check.
 */
export async function closeInterruptedExecutions(db: Queryable, turnId: string): Promise<SkillCallSummary[]> {
  await db.query(
    `UPDATE skill_executions SET status = 'interrupted', error = 'interrupted by a restart', finished_at = now()
     WHERE turn_id = $1 AND kind = 'agent' AND status = 'running'`,
    [turnId],
  );
  return db.query<SkillCallSummary>(
    `UPDATE skill_executions SET status = 'unknown', error = 'interrupted: may or may not have happened', finished_at = now()
     WHERE turn_id = $1 AND kind = 'skill' AND status = 'running'
     RETURNING command, status, skill`,
    [turnId],
  );
}

/** A mutating call of a turn as its receipt needs it (`receipt` set: see ExecutionRecord). */
export type EffectRow = {
  id: string;
  skill: string;
  status: SkillCallStatus;
  receipt: string;
  error: string | null;
};

/**
 * The effects of a turn in start order: every mutating skill call that reached its handler (or
 * that the sentinel stopped), its own or its sub-agents'.
 */
export async function effectsOfTurn(db: Queryable, turnId: string): Promise<EffectRow[]> {
  return db.query<EffectRow>(
    `SELECT id, COALESCE(skill, '') AS skill, status, receipt, error FROM skill_executions
     WHERE turn_id = $1 AND kind = 'skill' AND receipt IS NOT NULL
     ORDER BY started_at, id`,
    [turnId],
  );
}

/** A sub-agent of a turn as its row tells it, with the skill calls it made (in order). */
export type AgentRecordRow = {
  id: string;
  agentId: string;
  mission: string;
  spec: { skills?: string[]; context?: string | null; model?: string | null } | null;
  dependsOn: string[];
  status: AgentRowStatus;
  result: string | null;
  error: string | null;
  transcript: unknown;
  usage: unknown;
  durationMs: number | null;
  calls: Array<{ command: string; status: SkillCallStatus; skill: string | null; mutating: boolean }>;
};

/** Every sub-agent row of a turn, oldest first, with its skill calls. */
export async function agentRecordsOfTurn(db: Queryable, turnId: string): Promise<AgentRecordRow[]> {
  const rows = await db.query<Omit<Row, 'started_at' | 'finished_at'> & { transcript: unknown }>(
    `SELECT id, parent_id, kind, agent_id, mission, skill, command, flags, depends_on, status, result, error,
            transcript, usage, duration_ms, receipt
     FROM skill_executions WHERE turn_id = $1 ORDER BY started_at, id`,
    [turnId],
  );
  const agents = rows
    .filter((row) => row.kind === 'agent')
    .map(
      (row): AgentRecordRow => ({
        id: row.id,
        agentId: row.agent_id ?? '',
        mission: row.mission ?? '',
        spec: (row.flags as AgentRecordRow['spec']) ?? null,
        dependsOn: row.depends_on ?? [],
        status: row.status as AgentRowStatus,
        result: row.result,
        error: row.error,
        transcript: row.transcript,
        usage: row.usage,
        durationMs: row.duration_ms,
        calls: rows
          .filter((child) => child.kind === 'skill' && child.parent_id === row.id)
          .map((child) => ({
            command: child.command ?? '',
            status: child.status as SkillCallStatus,
            skill: child.skill,
            mutating: child.receipt !== null,
          })),
      }),
    );
  return agents;
}

/**
 * Records an agent that never ran (a dependency failed, the turn was cancelled), so traces list
 * it: `result` as the model was told, `reason` (why it was skipped) as its error.
 */
export async function recordSkippedAgent(
  db: Queryable,
  record: AgentRecord,
  skipped: { result: string; reason: string },
): Promise<void> {
  await db.query(
    `INSERT INTO skill_executions
       (id, parent_id, turn_id, user_id, conversation_id, kind, agent_id, mission, flags, depends_on, status, result, error, finished_at, duration_ms)
     VALUES ($1, $2, $3, $4, $5, 'agent', $6, $7, $8, $9, 'skipped', $10, $11, now(), 0)`,
    [...agentRowValues(record), storableText(skipped.result), storableText(skipped.reason)],
  );
}
