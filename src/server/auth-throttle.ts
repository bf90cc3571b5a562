import type { MiddlewareHandler } from 'hono';
import type { Logger } from '../logging/index.ts';
import { clientAddress, FailureThrottle } from '../security/index.ts';
import { refusal } from './refusal.ts';

/** Wrong tokens per address on /api, /v1, /mcp and /metrics: 20 a minute, then 429. */
export const AUTH_FAILURE_LIMIT = { maxFailures: 20, windowMs: 60_000 } as const;

/** The throttle the token-checking routes share, with the production limits. */
export function authFailureThrottle(): FailureThrottle {
  return new FailureThrottle(AUTH_FAILURE_LIMIT);
}

/**
 * Throttles token guessing. Runs around the route, so the token is checked first: a valid
 * one is never refused. A request that presented a token and was answered 401 counts as a
 * failure of its address; once the address has too many, such answers become 429 with
 * Retry-After. A request without any token guesses nothing and keeps its 401.
 */
export function throttleFailedAuth(throttle: FailureThrottle, logger: Logger): MiddlewareHandler {
  return async (c, next) => {
    await next();
    if (c.res.status !== 401 || !c.req.header('authorization')?.trim()) return;
    const address = clientAddress(c);
    const wait = throttle.retryAfter(address);
    if (wait === 0) {
      if (throttle.fail(address)) {
        logger.warn(
          { address, path: c.req.path },
          'too many wrong tokens from one address; its wrong tokens are answered 429 for a while',
        );
      }
      return;
    }
    const response = refusal(c, {
      status: 429,
      code: 'auth_throttled',
      message: `Too many wrong tokens from your address (at most ${throttle.maxFailures} in ${throttle.windowMs / 1000} s). Try again in ${wait} s; a valid token is always accepted.`,
    });
    response.headers.set('Retry-After', String(wait));
    c.res = undefined;
    c.res = response;
  };
}
