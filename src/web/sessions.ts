import { createHash, randomBytes } from 'node:crypto';
import type { Queryable } from '../db/index.ts';

/*
 * Dashboard sessions and one-time login links (`web_sessions`, `web_login_codes`, owned by this
 * folder). Only SHA-256 hashes of the cookie value and of the link code are stored.
 */

export const SESSION_TTL_MS = 14 * 24 * 60 * 60 * 1000;
export const LOGIN_CODE_TTL_MS = 10 * 60 * 1000;

export type WebSession = { userId: string; owner: boolean; csrf: string };

const hash = (value: string): string => createHash('sha256').update(value).digest('hex');

/** Starts a session; the returned id goes in the cookie and is never stored. */
export async function createSession(
  db: Queryable,
  who: { userId: string; owner: boolean },
  now: Date = new Date(),
): Promise<{ id: string; session: WebSession }> {
  const id = randomBytes(32).toString('base64url');
  const csrf = randomBytes(24).toString('base64url');
  await db.query(
    'INSERT INTO web_sessions (id_hash, user_id, owner, csrf, expires_at) VALUES ($1, $2, $3, $4, $5)',
    [hash(id), who.userId, who.owner, csrf, new Date(now.getTime() + SESSION_TTL_MS)],
  );
  // Expired sessions go as new ones start.
  await db.query('DELETE FROM web_sessions WHERE expires_at < $1', [now]);
  return { id, session: { userId: who.userId, owner: who.owner, csrf } };
}

export async function sessionOf(
  db: Queryable,
  id: string,
  now: Date = new Date(),
): Promise<WebSession | null> {
  if (!id || id.length > 200) return null;
  const rows = await db.query<{ user_id: string; owner: boolean; csrf: string }>(
    'SELECT user_id, owner, csrf FROM web_sessions WHERE id_hash = $1 AND expires_at > $2',
    [hash(id), now],
  );
  const row = rows[0];
  return row ? { userId: row.user_id, owner: row.owner, csrf: row.csrf } : null;
}

export async function endSession(db: Queryable, id: string): Promise<void> {
  await db.query('DELETE FROM web_sessions WHERE id_hash = $1', [hash(id)]);
}

/** A one-time login code, valid `LOGIN_CODE_TTL_MS`; the link is `/login/once/<code>`. */
export async function createLoginCode(
  db: Queryable,
  who: { userId: string; owner: boolean },
  now: Date = new Date(),
): Promise<string> {
  const code = randomBytes(24).toString('base64url');
  await db.query(
    'INSERT INTO web_login_codes (code_hash, user_id, owner, expires_at) VALUES ($1, $2, $3, $4)',
    [hash(code), who.userId, who.owner, new Date(now.getTime() + LOGIN_CODE_TTL_MS)],
  );
  await db.query('DELETE FROM web_login_codes WHERE expires_at < $1', [
    new Date(now.getTime() - LOGIN_CODE_TTL_MS),
  ]);
  return code;
}

/** Uses a login code up (once); who it logs in, or null when unknown, used or expired. */
export async function redeemLoginCode(
  db: Queryable,
  code: string,
  now: Date = new Date(),
): Promise<{ userId: string; owner: boolean } | null> {
  if (!/^[A-Za-z0-9_-]{10,100}$/.test(code)) return null;
  const rows = await db.query<{ user_id: string; owner: boolean }>(
    `UPDATE web_login_codes SET used_at = $2
     WHERE code_hash = $1 AND used_at IS NULL AND expires_at > $2
     RETURNING user_id, owner`,
    [hash(code), now],
  );
  const row = rows[0];
  return row ? { userId: row.user_id, owner: row.owner } : null;
}
