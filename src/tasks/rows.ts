import { randomBytes } from 'node:crypto';
import type { Row } from '../db/index.ts';
import type { Task, TaskFailure, TaskLink, TaskPriority, TaskStatus } from './types.ts';

/** The task columns every read selects (dates as text: drivers turn `date` into local-midnight Dates). */
export const TASK_COLUMNS = `t.id, t.user_id, t.title, t.description, t.status, t.priority, t.due_date::text AS due_date,
  t.assignee, t.tags, t.parent_id, t.recurrence, t.archived_at, t.completed_at, t.created_at, t.updated_at`;

export const PRIORITY_RANK_SQL = `CASE t.priority WHEN 'critical' THEN 0 WHEN 'high' THEN 1 WHEN 'medium' THEN 2 ELSE 3 END`;

export function toTask(row: Row): Task {
  return {
    id: String(row.id),
    userId: String(row.user_id),
    title: String(row.title),
    description: (row.description as string | null) ?? null,
    status: row.status as TaskStatus,
    priority: row.priority as TaskPriority,
    dueDate: (row.due_date as string | null) ?? null,
    assignee: (row.assignee as string | null) ?? null,
    tags: (row.tags as string[] | null) ?? [],
    parentId: (row.parent_id as string | null) ?? null,
    recurrence: (row.recurrence as string | null) ?? null,
    archivedAt: toIso(row.archived_at),
    completedAt: toIso(row.completed_at),
    createdAt: toIso(row.created_at) ?? '',
    updatedAt: toIso(row.updated_at) ?? '',
  };
}

export function toLink(row: Row): TaskLink {
  return { id: String(row.id), title: String(row.title), status: row.status as TaskStatus };
}

export function toIso(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  return new Date(String(value)).toISOString();
}

/** Task ids are case-insensitive for callers; stored lowercase. */
export function normalizeId(id: string): string {
  return id.trim().toLowerCase();
}

/** Tags are stored lowercase, without a leading `#`, once each. */
export function normalizeTags(tags: readonly string[]): string[] {
  const out: string[] = [];
  for (const tag of tags) {
    const clean = tag.trim().replace(/^#+/, '').toLowerCase();
    if (clean && !out.includes(clean)) out.push(clean);
  }
  return out;
}

const BASE32 = '0123456789abcdefghjkmnpqrstvwxyz';

/** `t_` + 8 characters of Crockford base32 (40 random bits): short enough to read aloud. */
export function randomTaskId(): string {
  const bytes = randomBytes(8);
  let id = 't_';
  for (let index = 0; index < 8; index++) id += BASE32[(bytes[index] ?? 0) & 31];
  return id;
}

/** Thrown inside a transaction to roll it back; caught at the API edge and returned as a value. */
export class TaskRejection extends Error {
  readonly failure: TaskFailure;
  constructor(code: TaskFailure['code'], message: string) {
    super(message);
    this.name = 'TaskRejection';
    this.failure = { ok: false, code, message };
  }
}

/** Runs `fn`, turning a TaskRejection into a failure value; other errors propagate. */
export async function asOutcome<T>(fn: () => Promise<T>): Promise<{ ok: true; value: T } | TaskFailure> {
  try {
    return { ok: true, value: await fn() };
  } catch (error) {
    if (error instanceof TaskRejection) return error.failure;
    throw error;
  }
}

/** A history value as a jsonb parameter (SQL NULL for null). */
export function jsonParam(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}
