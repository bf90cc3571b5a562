import type { Queryable } from '../db/index.ts';

/** One row of `steward usage`: a UTC day, a user and a model. Successful calls only. */
export type UsageDay = {
  date: string;
  user: string;
  model: string;
  calls: number;
  prompt_tokens: number;
  cached_tokens: number;
  completion_tokens: number;
  cost_usd: number;
};

type UsageRow = Omit<UsageDay, 'cost_usd'> & { cost_usd: number };

/** Calls made outside any user's turn (background embeddings with no user) are shown as this user. */
export const NO_USER = '(system)';

/** Midnight UTC of the day `at` falls in. */
export function utcDayStart(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
}

export function utcDate(at: Date): string {
  return utcDayStart(at).toISOString().slice(0, 10);
}

/**
 * Tokens and cost per UTC day, user and model over the last `days` days (today included),
 * oldest first, from the stored llm_calls (so it survives restarts).
 */
export async function dailyUsage(
  database: Queryable,
  options: { days: number; userId?: string; now?: Date },
): Promise<UsageDay[]> {
  const today = utcDayStart(options.now ?? new Date());
  const since = new Date(today.getTime() - (options.days - 1) * 86_400_000);
  const rows = await database.query<UsageRow>(
    `SELECT to_char((created_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') AS date,
            COALESCE(user_id, $3) AS "user", model,
            count(*)::int AS calls,
            sum(prompt_tokens)::int AS prompt_tokens,
            sum(cached_tokens)::int AS cached_tokens,
            sum(completion_tokens)::int AS completion_tokens,
            sum(cost)::float8 AS cost_usd
     FROM llm_calls
     WHERE created_at >= $1 AND error_class IS NULL AND ($2::text IS NULL OR user_id = $2)
     GROUP BY 1, 2, 3
     ORDER BY 1, 2, 3`,
    [since, options.userId ?? null, NO_USER],
  );
  return rows.map((row) => ({ ...row, cost_usd: Math.round(row.cost_usd * 1e6) / 1e6 }));
}

/** US dollars `userId` spent since `since` (every recorded call). */
export async function spentSince(database: Queryable, userId: string, since: Date): Promise<number> {
  const rows = await database.query<{ spent: number }>(
    'SELECT COALESCE(sum(cost), 0)::float8 AS spent FROM llm_calls WHERE user_id = $1 AND created_at >= $2',
    [userId, since],
  );
  return rows[0]?.spent ?? 0;
}
