import type { Queryable } from '../db/index.ts';

export type User = { id: string; displayName: string | null; timezone: string };

/** The machine's IANA time zone, used for users created from this process. */
let machineZone: string | null = null;

export function systemTimezone(): string {
  // Asking ICU builds a formatter each time; the machine's zone does not change while we run.
  machineZone ??= Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  return machineZone;
}

// `/` is allowed for channel users such as `googlechat:users/123`, `+` for `signal:+4915…`.
const USER_ID = /^[A-Za-z0-9][A-Za-z0-9_.:@/+-]{0,127}$/;

export function userIdProblem(id: string): string | null {
  return USER_ID.test(id) && !id.includes('..') && !id.includes('//') && !id.endsWith('/')
    ? null
    : `"${id}" is not a valid user id: use letters, digits and _ . : @ / + - (up to 128 characters).`;
}

/** Returns the user, creating it (with `timezone`, default the system's) on first use. */
export async function ensureUser(
  db: Queryable,
  id: string,
  options: { timezone?: string } = {},
): Promise<User> {
  const problem = userIdProblem(id);
  if (problem) throw new Error(problem);
  // Existing users (every message but a user's first) take a plain read, cheaper than an insert attempt.
  const known = await getUser(db, id);
  if (known) return known;
  const rows = await db.query<{ id: string; display_name: string | null; timezone: string }>(
    `WITH created AS (
       INSERT INTO users (id, timezone) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING
       RETURNING id, display_name, timezone)
     SELECT id, display_name, timezone FROM created
     UNION ALL SELECT id, display_name, timezone FROM users WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM created)`,
    [id, options.timezone ?? systemTimezone()],
  );
  const row = rows[0];
  if (row) return { id: row.id, displayName: row.display_name, timezone: row.timezone };
  // A concurrent insert of the same id committed after this statement's snapshot: read it now.
  const existing = await getUser(db, id);
  if (!existing) throw new Error(`user ${id} could not be created`);
  return existing;
}

/** Changes what is set; returns the user as stored. Throws on an unknown user (callers pass the caller's id). */
export async function updateUser(
  db: Queryable,
  id: string,
  changes: { timezone?: string; displayName?: string | null },
): Promise<User> {
  const rows = await db.query<{ id: string; display_name: string | null; timezone: string }>(
    `UPDATE users SET timezone = COALESCE($2, timezone),
       display_name = CASE WHEN $3::boolean THEN $4 ELSE display_name END
     WHERE id = $1 RETURNING id, display_name, timezone`,
    [id, changes.timezone ?? null, changes.displayName !== undefined, changes.displayName ?? null],
  );
  const row = rows[0];
  if (!row) throw new Error(`No user ${id}.`);
  return { id: row.id, displayName: row.display_name, timezone: row.timezone };
}

/**
 * The user, as ensureUser gives it, with one more value read in the same round trip by another
 * folder's SQL: `alongside.sql` is a scalar expression over `$1` (the user id) and `$2`…
 * (`alongside.params`). `alongside` is undefined when the user was created now (read it then).
 */
export async function ensureUserWith(
  db: Queryable,
  id: string,
  alongside: { sql: string; params: readonly unknown[] },
): Promise<{ user: User; alongside: unknown }> {
  const problem = userIdProblem(id);
  if (problem) throw new Error(problem);
  const rows = await db.query<{
    id: string;
    display_name: string | null;
    timezone: string;
    alongside: unknown;
  }>(`SELECT id, display_name, timezone, ${alongside.sql} AS alongside FROM users WHERE id = $1`, [
    id,
    ...alongside.params,
  ]);
  const row = rows[0];
  if (!row) return { user: await ensureUser(db, id), alongside: undefined };
  return {
    user: { id: row.id, displayName: row.display_name, timezone: row.timezone },
    alongside: row.alongside,
  };
}

export async function getUser(db: Queryable, id: string): Promise<User | null> {
  const rows = await db.query<{ id: string; display_name: string | null; timezone: string }>(
    'SELECT id, display_name, timezone FROM users WHERE id = $1',
    [id],
  );
  const row = rows[0];
  return row ? { id: row.id, displayName: row.display_name, timezone: row.timezone } : null;
}

/** The id of every user, in no particular order (maintenance passes over all users' data). */
export async function listUserIds(db: Queryable): Promise<string[]> {
  return (await db.query<{ id: string }>('SELECT id FROM users')).map((row) => row.id);
}
