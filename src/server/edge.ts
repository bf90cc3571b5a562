import type { MiddlewareHandler } from 'hono';
import type { ResolvedConfig } from '../config/index.ts';
import { isLoopbackHost } from './auth.ts';

/*
 * The network edge, before any route: Host and Origin checks against DNS rebinding and
 * cross-site requests, and JSON-only bodies on the API (body limits: body-limits.ts).
 */

const WILDCARD = new Set(['0.0.0.0', '::', '[::]']);

function hostnameOf(hostHeader: string): string {
  const host = hostHeader.trim().toLowerCase();
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  return host.replace(/:\d+$/, '');
}

/** Whether requests naming `hostname` are for this server (not a rebound DNS name). */
export function hostAllowed(hostname: string, config: ResolvedConfig): boolean {
  if (isLoopbackHost(hostname)) return true;
  const configured = config.host.toLowerCase();
  if (WILDCARD.has(configured)) {
    // Bound to every address (only allowed with a token): any name that reaches it is ours.
    if (config.api_token) return true;
  } else if (hostname === configured || hostname === `[${configured}]`) return true;
  if (
    config.public_url &&
    new URL(config.public_url).hostname.toLowerCase() === hostname.replace(/^\[|\]$/g, '')
  )
    return true;
  return config.allowed_hosts.map((entry) => entry.toLowerCase()).includes(hostname);
}

/** Refuses requests whose Host is not this server's (DNS rebinding), and foreign Origins. */
export function hostAndOriginGuard(config: () => ResolvedConfig): MiddlewareHandler {
  return async (c, next) => {
    const current = config();
    const host = c.req.header('host');
    if (host !== undefined && !hostAllowed(hostnameOf(host), current)) {
      return c.json(
        {
          error: 'forbidden_host',
          message: `Host "${hostnameOf(host)}" is not a name this server answers to. Use localhost, or add it to allowed_hosts (or set STEWARD_PUBLIC_URL).`,
        },
        403,
      );
    }
    const origin = c.req.header('origin');
    if (origin !== undefined) {
      let originHost: string | null = null;
      try {
        originHost = origin === 'null' ? null : new URL(origin).host;
      } catch {
        originHost = null;
      }
      const sameAsHost = host !== undefined && originHost?.toLowerCase() === host.trim().toLowerCase();
      if (!originHost || !(sameAsHost || hostAllowed(hostnameOf(originHost), current))) {
        return c.json(
          {
            error: 'forbidden_origin',
            message: `Requests from ${origin} are refused: the API does not serve other web sites.`,
          },
          403,
        );
      }
    }
    return next();
  };
}

/** Bodies of API writes must be JSON (a form or text/plain post from a web page is refused). */
export function jsonBodies(): MiddlewareHandler {
  return async (c, next) => {
    if (c.req.method !== 'POST' && c.req.method !== 'PUT' && c.req.method !== 'PATCH') return next();
    const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json') {
      return c.json(
        {
          error: 'unsupported_media_type',
          message: `Send the body as JSON with Content-Type: application/json (got ${type || 'none'}).`,
        },
        415,
      );
    }
    return next();
  };
}

/**
 * A JSON body that does not parse is answered 400 saying so, before any route reads it (which
 * would see null and answer with its schema's complaint). An empty body passes. Runs after
 * authentication.
 */
export function parsedJsonBodies(): MiddlewareHandler {
  return async (c, next) => {
    if (c.req.method !== 'POST' && c.req.method !== 'PUT' && c.req.method !== 'PATCH') return next();
    // Hono keeps the body read here: the route's own c.req.json() reads it from there.
    const text = await c.req.text();
    // No body at all is the route's to judge (some take an empty POST).
    if (text.trim() === '') return next();
    try {
      JSON.parse(text);
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      return c.json(
        {
          error: 'bad_request',
          message: `The request body is not valid JSON (${error.message}). Send one JSON object, e.g. {"text": "hello"}.`,
        },
        400,
      );
    }
    return next();
  };
}
