import { DATE_INPUT_FORMS, isRealDate, localDate } from './dates.ts';
import { normalizeTags, PRIORITY_RANK_SQL, TASK_COLUMNS, toTask } from './rows.ts';
import {
  ACTIVE_STATUSES,
  type Task,
  type TaskContext,
  type TaskOutcome,
  type TaskPriority,
  type TaskSort,
  type TaskStatus,
} from './types.ts';

/** Read access needs no actor. */
export type TaskReadContext = Pick<TaskContext, 'database' | 'userId' | 'timezone' | 'now'>;

export type TaskSearch = {
  /** Full text over title (weighted higher) and description; web-search syntax. */
  query?: string;
  /** Defaults to the active statuses: todo, in_progress, blocked. */
  statuses?: readonly TaskStatus[];
  /** Case-insensitive exact match. */
  assignee?: string;
  priorities?: readonly TaskPriority[];
  /** A task must carry all of them. */
  tags?: readonly string[];
  /** `YYYY-MM-DD`, inclusive. */
  dueBefore?: string;
  dueAfter?: string;
  /** Due before today (in the user's zone) and not done or cancelled. */
  overdue?: boolean;
  /** Defaults to relevance when `query` is given, else due_date. */
  sort?: TaskSort;
  limit?: number;
};

export type TaskSearchResult = { tasks: Task[] /** matches before the limit */; total: number };

const SORT_SQL: Record<TaskSort, string> = {
  due_date: `t.due_date ASC NULLS LAST, ${PRIORITY_RANK_SQL}, t.created_at, t.id`,
  priority: `${PRIORITY_RANK_SQL}, t.due_date ASC NULLS LAST, t.created_at, t.id`,
  created_at: 't.created_at DESC, t.id',
  updated_at: 't.updated_at DESC, t.id',
};

/** Finds the user's tasks that are not archived and match every filter given. */
export async function searchTasks(
  ctx: TaskReadContext,
  search: TaskSearch,
): Promise<TaskOutcome<TaskSearchResult>> {
  for (const date of [search.dueBefore, search.dueAfter]) {
    if (date !== undefined && !isRealDate(date)) {
      return {
        ok: false,
        code: 'invalid',
        message: `${date} is not a real calendar date. Use ${DATE_INPUT_FORMS}.`,
      };
    }
  }
  const params: unknown[] = [ctx.userId];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const where = ['t.user_id = $1', 't.archived_at IS NULL'];
  const statuses = search.statuses && search.statuses.length > 0 ? search.statuses : ACTIVE_STATUSES;
  where.push(`t.status = ANY(${param([...statuses])}::text[])`);
  if (search.priorities && search.priorities.length > 0) {
    where.push(`t.priority = ANY(${param([...search.priorities])}::text[])`);
  }
  if (search.assignee) where.push(`lower(t.assignee) = lower(${param(search.assignee.trim())})`);
  const tags = normalizeTags(search.tags ?? []);
  if (tags.length > 0) where.push(`t.tags @> ${param(tags)}::text[]`);
  if (search.dueBefore) where.push(`t.due_date <= ${param(search.dueBefore)}::date`);
  if (search.dueAfter) where.push(`t.due_date >= ${param(search.dueAfter)}::date`);
  if (search.overdue) {
    const today = localDate(ctx.timezone, ctx.now()) ?? ctx.now().toISOString().slice(0, 10);
    where.push(
      `t.due_date < ${param(today)}::date`,
      `t.status = ANY(${param([...ACTIVE_STATUSES])}::text[])`,
    );
  }
  let rank = '0';
  const text = search.query?.trim();
  if (text) {
    const tsquery = `websearch_to_tsquery('english', ${param(text)})`;
    rank = `ts_rank(t.search_vector, ${tsquery})`;
    // The title substring match catches what stemming cannot: partial words, ids, stop words.
    where.push(`(t.search_vector @@ ${tsquery} OR t.title ILIKE ${param(`%${escapeLike(text)}%`)})`);
  }
  const order =
    search.sort || !text ? SORT_SQL[search.sort ?? 'due_date'] : `rank DESC, ${SORT_SQL.due_date}`;
  const limit = Math.min(Math.max(Math.trunc(search.limit ?? 20), 1), 100);
  const rows = await ctx.database.query(
    `SELECT ${TASK_COLUMNS}, ${rank} AS rank, count(*) OVER () AS total
     FROM tasks t WHERE ${where.join(' AND ')}
     ORDER BY ${order} LIMIT ${param(limit)}`,
    params,
  );
  return { ok: true, value: { tasks: rows.map(toTask), total: Number(rows[0]?.total ?? 0) } };
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (character) => `\\${character}`);
}
