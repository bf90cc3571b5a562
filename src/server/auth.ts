import { timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

export function isLoopbackHost(host: string): boolean {
  return LOOPBACK.has(host) || host.startsWith('127.');
}

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Requires `Authorization: Bearer <token>` when a token is configured (read per request: hot reload). */
export function bearerAuth(token: () => string | undefined): MiddlewareHandler {
  return async (c, next) => {
    const expected = token();
    if (!expected) return next();
    const header = c.req.header('authorization') ?? '';
    const match = /^Bearer\s+(.+)$/i.exec(header);
    if (!match || !sameToken(match[1]!.trim(), expected)) {
      return c.json(
        { error: 'unauthorized', message: 'Send Authorization: Bearer <STEWARD_API_TOKEN>.' },
        401,
      );
    }
    return next();
  };
}
