import { randomUUID } from 'node:crypto';
import type { Queryable, Row } from '../db/index.ts';

export type RunStatus = 'running' | 'ok' | 'failed' | 'missed' | 'delivery_failed';
export type RunTrigger = 'schedule' | 'catch_up' | 'manual';

/** One scheduled time of one workflow (`workflow_runs`). */
export type WorkflowRun = {
  id: string;
  userId: string;
  skill: string;
  scheduledFor: Date;
  trigger: RunTrigger;
  status: RunStatus;
  startedAt: Date | null;
  finishedAt: Date | null;
  turnId: string | null;
  costUsd: number;
  error: string | null;
  jobId: string | null;
  /** The delivery of its output (channels' receipt), once it was handed to deliver(). */
  deliveryId: string | null;
};

const RUN_COLUMNS =
  'id, user_id, skill, scheduled_for, trigger, status, started_at, finished_at, turn_id, cost_usd, error, job_id, delivery_id';

function toDate(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  return value instanceof Date ? value : new Date(String(value));
}

function toRun(row: Row): WorkflowRun {
  return {
    id: String(row.id),
    userId: String(row.user_id),
    skill: String(row.skill),
    scheduledFor: toDate(row.scheduled_for)!,
    trigger: row.trigger as RunTrigger,
    status: row.status as RunStatus,
    startedAt: toDate(row.started_at),
    finishedAt: toDate(row.finished_at),
    turnId: (row.turn_id as string | null) ?? null,
    costUsd: Number(row.cost_usd ?? 0),
    error: (row.error as string | null) ?? null,
    jobId: (row.job_id as string | null) ?? null,
    deliveryId: (row.delivery_id as string | null) ?? null,
  };
}

/**
 * Claims one scheduled time: inserts its run unless one exists. Returns the new run, or null
 * when this scheduled time was already claimed (by this or another instance, before or after
 * a restart) — the unique key is what makes each scheduled time run once.
 */
export async function claimRun(
  db: Queryable,
  run: {
    userId: string;
    skill: string;
    scheduledFor: Date;
    trigger: RunTrigger;
    status: 'running' | 'missed';
    startedAt: Date | null;
    jobId?: string | null;
    error?: string | null;
  },
): Promise<WorkflowRun | null> {
  const rows = await db.query(
    `INSERT INTO workflow_runs (id, user_id, skill, scheduled_for, trigger, status, started_at, finished_at, job_id, error)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (user_id, skill, scheduled_for) DO NOTHING
     RETURNING ${RUN_COLUMNS}`,
    [
      `wr_${randomUUID()}`,
      run.userId,
      run.skill,
      run.scheduledFor.toISOString(),
      run.trigger,
      run.status,
      run.startedAt?.toISOString() ?? null,
      run.status === 'missed' ? (run.startedAt ?? new Date()).toISOString() : null,
      run.jobId ?? null,
      run.error ?? null,
    ],
  );
  return rows[0] ? toRun(rows[0]) : null;
}

export async function runAt(
  db: Queryable,
  key: { userId: string; skill: string; scheduledFor: Date },
): Promise<WorkflowRun | null> {
  const rows = await db.query(
    `SELECT ${RUN_COLUMNS} FROM workflow_runs WHERE user_id = $1 AND skill = $2 AND scheduled_for = $3`,
    [key.userId, key.skill, key.scheduledFor.toISOString()],
  );
  return rows[0] ? toRun(rows[0]) : null;
}

/** Records how a running run ended (only a running one: a finished run is never rewritten). */
export async function finishRun(
  db: Queryable,
  id: string,
  end: {
    status: Exclude<RunStatus, 'running' | 'missed'>;
    finishedAt: Date;
    turnId?: string | null;
    costUsd?: number;
    error?: string | null;
    deliveryId?: string | null;
  },
): Promise<void> {
  await db.query(
    `UPDATE workflow_runs SET status = $2, finished_at = $3, turn_id = coalesce($4, turn_id),
       cost_usd = $5, error = $6, delivery_id = $7
     WHERE id = $1 AND status = 'running'`,
    [
      id,
      end.status,
      end.finishedAt.toISOString(),
      end.turnId ?? null,
      end.costUsd ?? 0,
      end.error ?? null,
      end.deliveryId ?? null,
    ],
  );
}

/** Sets the turn of a running run as soon as it is known. */
export async function setRunTurn(db: Queryable, id: string, turnId: string): Promise<void> {
  await db.query(`UPDATE workflow_runs SET turn_id = $2 WHERE id = $1`, [id, turnId]);
}

/** The latest run of each (user, skill), for the operator view. */
export async function latestRuns(db: Queryable, userId?: string): Promise<WorkflowRun[]> {
  const rows = await db.query(
    `SELECT DISTINCT ON (user_id, skill) ${RUN_COLUMNS} FROM workflow_runs
     ${userId ? 'WHERE user_id = $1' : ''}
     ORDER BY user_id, skill, scheduled_for DESC`,
    userId ? [userId] : [],
  );
  return rows.map(toRun);
}

/** Runs of one workflow, newest first. */
export async function runsOf(
  db: Queryable,
  key: { userId: string; skill: string },
  limit = 20,
): Promise<WorkflowRun[]> {
  const rows = await db.query(
    `SELECT ${RUN_COLUMNS} FROM workflow_runs WHERE user_id = $1 AND skill = $2
     ORDER BY scheduled_for DESC LIMIT $3`,
    [key.userId, key.skill, limit],
  );
  return rows.map(toRun);
}

/**
 * Registers a schedule and returns since when it holds — unchanged (same cron and zone) it keeps
 * its first registration time, so runs missed while Steward was down are found from there — and
 * the latest scheduled time it has a run for (manual runs excluded).
 */
export async function registerSchedule(
  db: Queryable,
  schedule: { userId: string; skill: string; cron: string; timezone: string; now: Date },
): Promise<{ since: Date; latest: Date | null }> {
  const rows = await db.query(
    `INSERT INTO workflow_schedules (user_id, skill, cron, timezone, since, updated_at)
     VALUES ($1, $2, $3, $4, $5, $5)
     ON CONFLICT (user_id, skill) DO UPDATE SET
       since = CASE WHEN workflow_schedules.cron = EXCLUDED.cron AND workflow_schedules.timezone = EXCLUDED.timezone
                    THEN workflow_schedules.since ELSE EXCLUDED.since END,
       cron = EXCLUDED.cron, timezone = EXCLUDED.timezone, updated_at = EXCLUDED.updated_at
     RETURNING since, (SELECT max(scheduled_for) FROM workflow_runs
       WHERE user_id = $1 AND skill = $2 AND trigger <> 'manual') AS latest`,
    [schedule.userId, schedule.skill, schedule.cron, schedule.timezone, schedule.now.toISOString()],
  );
  return { since: toDate(rows[0]?.since) ?? schedule.now, latest: toDate(rows[0]?.latest) };
}

/** Forgets schedules that no longer exist (a later schedule of the same name starts afresh). */
export async function removeSchedules(
  db: Queryable,
  keep: Array<{ userId: string; skill: string }>,
): Promise<void> {
  const keys = keep.map((key) => `${key.userId} ${key.skill}`);
  await db.query(`DELETE FROM workflow_schedules WHERE NOT (user_id || ' ' || skill = ANY($1::text[]))`, [
    keys,
  ]);
}

/** Pauses (at `pausedAt`) or resumes (null) a registered schedule; false when it is not registered. */
export async function setSchedulePaused(
  db: Queryable,
  key: { userId: string; skill: string },
  pausedAt: Date | null,
): Promise<boolean> {
  const rows = await db.query(
    'UPDATE workflow_schedules SET paused_at = $3 WHERE user_id = $1 AND skill = $2 RETURNING skill',
    [key.userId, key.skill, pausedAt?.toISOString() ?? null],
  );
  return rows.length > 0;
}

/** The paused schedules (one user's, or everyone's), as `user skill` keys. */
export async function pausedSchedules(db: Queryable, userId?: string): Promise<Set<string>> {
  const rows = await db.query<{ user_id: string; skill: string }>(
    `SELECT user_id, skill FROM workflow_schedules WHERE paused_at IS NOT NULL ${userId ? 'AND user_id = $1' : ''}`,
    userId ? [userId] : [],
  );
  return new Set(rows.map((row) => `${row.user_id} ${row.skill}`));
}
