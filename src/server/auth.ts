import { timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { Context, MiddlewareHandler } from 'hono';
import type { Queryable } from '../db/index.ts';
import { userOfApiToken } from '../users/index.ts';

/** Who is calling: the owner (may act as anyone) or one user (acts only as itself). */
export type Principal = { userId: string; owner: boolean };
export type AuthEnv = { Variables: { principal: Principal } };

export const OWNER_USER = 'local';

/** A literal loopback address or `localhost` — never a name that merely starts with `127.`. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === 'localhost') return true;
  const family = isIP(bare);
  if (family === 4) return bare.startsWith('127.');
  if (family === 6) return bare === '::1' || bare === '0:0:0:0:0:0:0:1';
  return false;
}

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Requires `Authorization: Bearer` with any of `tokens` when at least one is configured (read
 * per request); `names` says in the refusal which settings hold them.
 */
export function bearerAuthAny(tokens: () => Array<string | undefined>, names: string): MiddlewareHandler {
  return async (c, next) => {
    const expected = tokens().filter((token): token is string => Boolean(token));
    if (expected.length === 0) return next();
    const match = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization') ?? '');
    const given = match?.[1]?.trim();
    if (!given || !expected.some((token) => sameToken(given, token))) {
      return c.json({ error: 'unauthorized', message: `Send Authorization: Bearer <${names}>.` }, 401);
    }
    return next();
  };
}

const UNAUTHORIZED = {
  error: 'unauthorized',
  message: 'Send Authorization: Bearer <STEWARD_API_TOKEN> (or a token from `steward tokens create`).',
};

/**
 * Resolves the caller from `Authorization: Bearer …`: the owner's token (read per request, so
 * a hot reload applies), or a per-user token. With no owner token configured (a loopback-only
 * server), a request without a token is the owner's.
 */
export function apiAuth(options: {
  token: () => string | undefined;
  database: Queryable;
}): MiddlewareHandler<AuthEnv> {
  return async (c, next) => {
    const expected = options.token();
    const match = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('authorization') ?? '');
    if (!match) {
      if (expected) return c.json(UNAUTHORIZED, 401);
      c.set('principal', { userId: OWNER_USER, owner: true });
      return next();
    }
    const given = match[1]!;
    if (expected && sameToken(given, expected)) {
      c.set('principal', { userId: OWNER_USER, owner: true });
      return next();
    }
    const userId = await userOfApiToken(options.database, given);
    if (!userId) return c.json(UNAUTHORIZED, 401);
    c.set('principal', { userId, owner: false });
    return next();
  };
}

/**
 * The user a request acts as: `requested` (the body's `user`) for the owner, else the token's
 * own user. A user token asking to act as someone else gets a 403 response instead.
 */
export function actingUser(
  c: Context<AuthEnv>,
  requested: string | undefined,
): { userId: string } | { response: Response } {
  const principal = c.get('principal');
  if (principal.owner) return { userId: requested ?? OWNER_USER };
  if (requested !== undefined && requested !== principal.userId) {
    return {
      response: c.json(
        {
          error: 'forbidden',
          message: `This token acts only as user ${principal.userId}; leave "user" out or set it to that.`,
        },
        403,
      ),
    };
  }
  return { userId: principal.userId };
}

/** Whether the caller may see data of `userId` (its own, or anything for the owner). */
export function mayRead(c: Context<AuthEnv>, userId: string): boolean {
  const principal = c.get('principal');
  return principal.owner || principal.userId === userId;
}

/** Lets only the owner's token through; anyone else gets a 403 saying only it `does` this. */
export function ownerOnly(does: string): MiddlewareHandler<AuthEnv> {
  return async (c, next) => {
    if (!c.get('principal').owner)
      return c.json(
        { error: 'forbidden', message: `Only the owner's token (STEWARD_API_TOKEN) ${does}.` },
        403,
      );
    return next();
  };
}
