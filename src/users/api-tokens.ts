import { createHash, randomBytes } from 'node:crypto';
import type { Queryable } from '../db/index.ts';

/* Per-user API tokens (`api_tokens`, owned by this folder). Only a hash is stored. */

export type ApiToken = {
  id: string;
  userId: string;
  name: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
};

type TokenRow = {
  id: string;
  user_id: string;
  name: string | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
};

const toToken = (row: TokenRow): ApiToken => ({
  id: row.id,
  userId: row.user_id,
  name: row.name,
  createdAt: new Date(row.created_at),
  lastUsedAt: row.last_used_at ? new Date(row.last_used_at) : null,
  revokedAt: row.revoked_at ? new Date(row.revoked_at) : null,
});

export const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');

/** A token prefix says what it is when it turns up somewhere it should not (logs, repos). */
const PREFIX = 'stw_';

/** Creates a token for `userId`; the token itself is returned once and never stored. */
export async function createApiToken(
  db: Queryable,
  userId: string,
  name: string | null = null,
): Promise<{ token: string; record: ApiToken }> {
  const token = `${PREFIX}${randomBytes(24).toString('base64url')}`;
  const id = `tok_${randomBytes(6).toString('hex')}`;
  const rows = await db.query<TokenRow>(
    `INSERT INTO api_tokens (id, user_id, token_hash, name) VALUES ($1, $2, $3, $4)
     RETURNING id, user_id, name, created_at, last_used_at, revoked_at`,
    [id, userId, hashToken(token), name],
  );
  return { token, record: toToken(rows[0]!) };
}

/** The user a (not revoked) token belongs to, or null. Notes when it was last used. */
export async function userOfApiToken(db: Queryable, token: string): Promise<string | null> {
  const rows = await db.query<{ user_id: string }>(
    `UPDATE api_tokens SET last_used_at = now() WHERE token_hash = $1 AND revoked_at IS NULL RETURNING user_id`,
    [hashToken(token)],
  );
  return rows[0]?.user_id ?? null;
}

export async function listApiTokens(db: Queryable, userId?: string): Promise<ApiToken[]> {
  const rows = await db.query<TokenRow>(
    `SELECT id, user_id, name, created_at, last_used_at, revoked_at FROM api_tokens
     WHERE ($1::text IS NULL OR user_id = $1) ORDER BY created_at`,
    [userId ?? null],
  );
  return rows.map(toToken);
}

/** Revokes a token by id; false when there is no such active token. */
export async function revokeApiToken(db: Queryable, id: string): Promise<boolean> {
  const rows = await db.query(
    'UPDATE api_tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL RETURNING id',
    [id],
  );
  return rows.length === 1;
}
