import type { Queryable } from '../../db/index.ts';

/*
 * The per-user daily budget of web calls (limits.web_calls_per_user_per_day): one row per user
 * and UTC day, counted in the database so every instance shares it. A call is counted when it
 * is about to reach the network, whatever the site then answers.
 */

export type WebCallKind = 'search' | 'fetch';

export type WebBudget = { allowed: boolean; used: number; limit: number };

/** `steward usage`'s web figures: one row per UTC day and user. */
export type WebCallsDay = { date: string; user: string; searches: number; fetches: number; calls: number };

function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/**
 * Counts one call of `kind` for `userId` today (UTC), unless the user already made `limit`
 * calls today; `limit` 0 means no limit. Atomic: concurrent calls never pass the limit.
 */
export async function reserveWebCall(
  database: Queryable,
  input: { userId: string; kind: WebCallKind; limit: number; now: Date },
): Promise<WebBudget> {
  const day = utcDay(input.now);
  const search = input.kind === 'search' ? 1 : 0;
  const [row] = await database.query<{ used: number }>(
    `INSERT INTO web_call_days AS d (user_id, day, searches, fetches) VALUES ($1, $2::date, $3, $4)
     ON CONFLICT (user_id, day) DO UPDATE
       SET searches = d.searches + EXCLUDED.searches, fetches = d.fetches + EXCLUDED.fetches
       WHERE $5::int = 0 OR d.searches + d.fetches < $5::int
     RETURNING (searches + fetches)::int AS used`,
    [input.userId, day, search, 1 - search, input.limit],
  );
  if (row) return { allowed: true, used: row.used, limit: input.limit };
  const [current] = await database.query<{ used: number }>(
    'SELECT (searches + fetches)::int AS used FROM web_call_days WHERE user_id = $1 AND day = $2::date',
    [input.userId, day],
  );
  return { allowed: false, used: current?.used ?? input.limit, limit: input.limit };
}

/** Web calls per UTC day and user over the last `days` days (today included), oldest first. */
export async function dailyWebCalls(
  database: Queryable,
  options: { days: number; userId?: string; now?: Date },
): Promise<WebCallsDay[]> {
  const today = utcDay(options.now ?? new Date());
  return database.query<WebCallsDay>(
    `SELECT to_char(day, 'YYYY-MM-DD') AS date, user_id AS "user", searches, fetches,
            (searches + fetches)::int AS calls
     FROM web_call_days
     WHERE day > $1::date - $2::int AND ($3::text IS NULL OR user_id = $3)
     ORDER BY day, user_id`,
    [today, options.days, options.userId ?? null],
  );
}
