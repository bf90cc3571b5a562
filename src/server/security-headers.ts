import type { MiddlewareHandler } from 'hono';

/** The Content-Security-Policy every response gets unless a route sets its own. */
export const DEFAULT_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Security headers for pages Steward serves (the dashboard) and everything else: a strict CSP
 * whose `frame-ancestors 'none'` (with X-Frame-Options) keeps pages out of other sites' frames,
 * no MIME sniffing, no referrer, no powerful browser features. A header a route (or an inner
 * `securityHeaders({ csp })`) already set is kept, so the dashboard can widen its own policy.
 */
export function securityHeaders(options: { csp?: string } = {}): MiddlewareHandler {
  const headers: Record<string, string> = {
    'Content-Security-Policy': options.csp ?? DEFAULT_CSP,
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=()',
  };
  return async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(headers)) {
      if (!c.res.headers.has(name)) c.res.headers.set(name, value);
    }
  };
}
