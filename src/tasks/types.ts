import type { Database } from '../db/index.ts';

export const TASK_STATUSES = ['todo', 'in_progress', 'blocked', 'done', 'cancelled'] as const;
export const ACTIVE_STATUSES = ['todo', 'in_progress', 'blocked'] as const;
export const TASK_PRIORITIES = ['critical', 'high', 'medium', 'low'] as const;
export const TASK_SORTS = ['due_date', 'priority', 'created_at', 'updated_at'] as const;

export type TaskStatus = (typeof TASK_STATUSES)[number];
export type TaskPriority = (typeof TASK_PRIORITIES)[number];
export type TaskSort = (typeof TASK_SORTS)[number];

export type Task = {
  id: string;
  userId: string;
  title: string;
  description: string | null;
  status: TaskStatus;
  priority: TaskPriority;
  /** `YYYY-MM-DD` */
  dueDate: string | null;
  assignee: string | null;
  tags: string[];
  parentId: string | null;
  recurrence: string | null;
  /** ISO timestamps */
  archivedAt: string | null;
  completedAt: string | null;
  createdAt: string;
  updatedAt: string;
};

export type TaskComment = { id: number; taskId: string; author: string; body: string; createdAt: string };

export type TaskHistoryEntry = {
  id: number;
  taskId: string;
  actor: string;
  field: string;
  oldValue: unknown;
  newValue: unknown;
  executionId: string | null;
  createdAt: string;
};

/** A task linked to the one in view, with enough to judge it at a glance. */
export type TaskLink = { id: string; title: string; status: TaskStatus };

export type TaskDetail = Task & {
  dependsOn: TaskLink[];
  blocks: TaskLink[];
  subtasks: TaskLink[];
  comments: TaskComment[];
  /** Newest first, at most the requested number. */
  history: TaskHistoryEntry[];
};

/**
 * Who acts, for whom and when. Every query is scoped to `userId`: a task id is never used
 * without it. `now` dates records; `timezone` decides what "today" is.
 */
export type TaskContext = {
  database: Database;
  userId: string;
  timezone: string;
  /** Written to history and comments: `user:<id>` or `agent:<id>`. */
  actor: string;
  executionId: string | null;
  now: () => Date;
  /** Task id generator; defaults to `t_` + 8 random base32 characters. */
  randomId?: () => string;
};

/** Expected failures, as values. `message` tells the caller how to fix the request. */
export type TaskFailure = {
  ok: false;
  code: 'not_found' | 'invalid' | 'cycle' | 'archived';
  message: string;
};

export type TaskOutcome<T> = { ok: true; value: T } | TaskFailure;

export const notFoundMessage = (id: string) => `No task ${id}. Find ids with tasks.search.`;
