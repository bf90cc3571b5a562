import type { Row } from '../db/index.ts';
import { toComment } from './comments.ts';
import { toHistoryEntry } from './history.ts';
import { normalizeId, TASK_COLUMNS, toLink, toTask } from './rows.ts';
import type { TaskReadContext } from './search.ts';
import { notFoundMessage, type Task, type TaskDetail, type TaskOutcome } from './types.ts';

export type DetailOptions = { /** newest history rows per task; default 10 */ historyLimit?: number };

/** One of the user's tasks (archived ones included), or not_found. */
export async function getTask(ctx: TaskReadContext, taskId: string): Promise<TaskOutcome<Task>> {
  const id = normalizeId(taskId);
  const rows = await ctx.database.query(
    `SELECT ${TASK_COLUMNS} FROM tasks t WHERE t.user_id = $1 AND t.id = $2`,
    [ctx.userId, id],
  );
  return rows[0]
    ? { ok: true, value: toTask(rows[0]) }
    : { ok: false, code: 'not_found', message: notFoundMessage(id) };
}

/**
 * Full detail of the user's tasks in the order asked: dependencies both ways, subtasks,
 * comments and recent history. Fails naming the first id that is not one of the user's tasks.
 */
export async function getTasks(
  ctx: TaskReadContext,
  taskIds: readonly string[],
  options: DetailOptions = {},
): Promise<TaskOutcome<TaskDetail[]>> {
  const ids = [...new Set(taskIds.map(normalizeId))];
  const rows = await ctx.database.query(
    `SELECT ${TASK_COLUMNS} FROM tasks t WHERE t.user_id = $1 AND t.id = ANY($2::text[])`,
    [ctx.userId, ids],
  );
  const byId = new Map(rows.map((row) => [String(row.id), toTask(row)]));
  const missing = ids.find((id) => !byId.has(id));
  if (missing !== undefined) return { ok: false, code: 'not_found', message: notFoundMessage(missing) };
  const tasks = ids.map((id) => byId.get(id)).filter((task): task is Task => task !== undefined);
  return { ok: true, value: await withDetail(ctx, tasks, options) };
}

/** The user's `limit` most recently updated tasks that are not archived, newest first, in full detail. */
export async function getRecentTasks(
  ctx: TaskReadContext,
  limit: number,
  options: DetailOptions = {},
): Promise<TaskDetail[]> {
  const rows = await ctx.database.query(
    `SELECT ${TASK_COLUMNS} FROM tasks t WHERE t.user_id = $1 AND t.archived_at IS NULL
     ORDER BY t.updated_at DESC, t.created_at DESC, t.id LIMIT $2`,
    [ctx.userId, Math.max(1, Math.trunc(limit))],
  );
  return withDetail(ctx, rows.map(toTask), options);
}

async function withDetail(
  ctx: TaskReadContext,
  tasks: Task[],
  options: DetailOptions,
): Promise<TaskDetail[]> {
  if (tasks.length === 0) return [];
  const ids = tasks.map((task) => task.id);
  const params = [ctx.userId, ids];
  // Every linked row is joined back to a task of the same user: ids alone never reach across users.
  const [dependsOn, blocks, subtasks, comments, history] = await Promise.all([
    ctx.database.query(
      `SELECT d.task_id AS owner, t.id, t.title, t.status FROM task_dependencies d
       JOIN tasks t ON t.id = d.depends_on_id AND t.user_id = $1
       WHERE d.task_id = ANY($2::text[]) ORDER BY d.created_at, t.id`,
      params,
    ),
    ctx.database.query(
      `SELECT d.depends_on_id AS owner, t.id, t.title, t.status FROM task_dependencies d
       JOIN tasks t ON t.id = d.task_id AND t.user_id = $1
       WHERE d.depends_on_id = ANY($2::text[]) AND t.archived_at IS NULL ORDER BY d.created_at, t.id`,
      params,
    ),
    ctx.database.query(
      `SELECT t.parent_id AS owner, t.id, t.title, t.status FROM tasks t
       WHERE t.user_id = $1 AND t.parent_id = ANY($2::text[]) AND t.archived_at IS NULL ORDER BY t.created_at, t.id`,
      params,
    ),
    ctx.database.query(
      `SELECT c.id, c.task_id, c.author, c.body, c.created_at FROM task_comments c
       WHERE c.user_id = $1 AND c.task_id = ANY($2::text[]) ORDER BY c.created_at, c.id`,
      params,
    ),
    ctx.database.query(
      `SELECT * FROM (
         SELECT h.*, row_number() OVER (PARTITION BY h.task_id ORDER BY h.created_at DESC, h.id DESC) AS position
         FROM task_history h WHERE h.user_id = $1 AND h.task_id = ANY($2::text[])
       ) recent WHERE position <= $3 ORDER BY created_at DESC, id DESC`,
      [...params, options.historyLimit ?? 10],
    ),
  ]);
  const group = (list: Row[], key: string) => {
    const out = new Map<string, Row[]>();
    for (const row of list) out.set(String(row[key]), [...(out.get(String(row[key])) ?? []), row]);
    return out;
  };
  const [dependsOnBy, blocksBy, subtasksBy, commentsBy, historyBy] = [
    group(dependsOn, 'owner'),
    group(blocks, 'owner'),
    group(subtasks, 'owner'),
    group(comments, 'task_id'),
    group(history, 'task_id'),
  ];
  return tasks.map((task) => ({
    ...task,
    dependsOn: (dependsOnBy.get(task.id) ?? []).map(toLink),
    blocks: (blocksBy.get(task.id) ?? []).map(toLink),
    subtasks: (subtasksBy.get(task.id) ?? []).map(toLink),
    comments: (commentsBy.get(task.id) ?? []).map(toComment),
    history: (historyBy.get(task.id) ?? []).map(toHistoryEntry),
  }));
}
