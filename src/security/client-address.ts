import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';

/**
 * The address a request came from: the TCP peer's. Forwarding headers (X-Forwarded-For) are
 * not trusted, so behind a reverse proxy every client has the proxy's address; the throttles
 * keyed by it therefore only ever count failures and never refuse valid credentials.
 * `unknown` for in-process requests (`app.request()` in tests), which have no socket.
 */
export function clientAddress(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown';
  }
}
