import { type Context, Hono, type MiddlewareHandler } from 'hono';
import type { ResolvedConfig } from '../config/index.ts';
import type { Database } from '../db/index.ts';
import { errorMessage } from '../errors.ts';
import type { Logger } from '../logging/index.ts';
import type { FailureThrottle } from '../security/index.ts';
import { VOICE_UPLOAD_PATH } from './api-voice.ts';
import { type AuthEnv, apiAuth } from './auth.ts';
import { authFailureThrottle, throttleFailedAuth } from './auth-throttle.ts';
import {
  API_BODY_LIMIT,
  type BodyLimitRule,
  bodyOverflowed,
  CHAT_FORM_BODY_LIMIT,
  FORM_BODY_LIMIT,
  requestBodyLimits,
  UPLOAD_WRAPPING_BYTES,
} from './body-limits.ts';
import { hostAndOriginGuard, jsonBodies, parsedJsonBodies } from './edge.ts';
import { healthRoutes } from './health.ts';
import type { HttpLifecycle } from './lifecycle.ts';
import { type MetricsSource, metricsRoutes } from './metrics-route.ts';
import { securityHeaders } from './security-headers.ts';

export type ServerDeps = {
  database: Database;
  logger: Logger;
  config: () => ResolvedConfig;
  /** Routes mounted under /api (behind the bearer token). */
  api?: Hono<AuthEnv>;
  /** Counts requests in flight and refuses new ones while stopping. */
  lifecycle?: HttpLifecycle;
  /** Channel webhooks, mounted under /webhooks (each verified by its platform's signature). */
  webhooks?: Hono;
  /** Served at GET /metrics (behind the API or metrics token). */
  metrics?: MetricsSource;
  /** Routes mounted at the root, outside /api and its token (they carry their own secret, e.g. /ical/<token>.ics). */
  routes?: Hono[];
  /** Steward's MCP server, mounted at /mcp (behind the same tokens as /api). */
  mcp?: Hono<AuthEnv>;
  /** Wrong tokens per address on /api, /v1, /mcp and /metrics (default: 20 a minute). */
  authThrottle?: FailureThrottle;
  /** What a browser gets for an unknown page (JSON otherwise); must answer 404. */
  notFoundPage?: (c: Context) => Response | Promise<Response>;
};

/** Paths that only machines call: an unknown one there is always answered in JSON. */
const MACHINE_PATHS = /^\/(api|v1|mcp|webhooks|metrics|ical)(\/|$)/;

/** A browser navigating (Accept names text/html), not an API client (JSON or any type). */
export function wantsHtml(c: Context): boolean {
  return (c.req.header('accept') ?? '').includes('text/html') && !MACHINE_PATHS.test(c.req.path);
}

/**
 * Every route's body limit, first match first; any other route (the dashboard's forms, login
 * included) takes FORM_BODY_LIMIT. Webhooks are limited by their guard (1 MB, after verifying).
 */
export function bodyLimitRules(config: () => ResolvedConfig): BodyLimitRule[] {
  const api = () => API_BODY_LIMIT;
  return [
    {
      path: VOICE_UPLOAD_PATH,
      maxBytes: () => config().voice.max_bytes + UPLOAD_WRAPPING_BYTES,
      setting: 'voice.max_bytes, plus 64 KB for a form',
    },
    { path: '/api/*', maxBytes: api },
    { path: '/v1/*', maxBytes: api },
    { path: '/mcp/*', maxBytes: api },
    { path: '/chat', maxBytes: () => CHAT_FORM_BODY_LIMIT },
    { path: '/chat/stream', maxBytes: () => CHAT_FORM_BODY_LIMIT },
  ];
}

/** The HTTP app. Built without listening, so tests call `app.request()` in-process. */
export function createServerApp(deps: ServerDeps): Hono {
  const app = new Hono();
  app.use('*', securityHeaders());
  if (deps.lifecycle) app.use('*', deps.lifecycle.middleware());
  app.route('/', healthRoutes(deps.database));
  const guard = hostAndOriginGuard(deps.config);
  const isWebhook = (path: string) => path.startsWith('/webhooks/');
  // Webhooks carry their own signatures and arrive under whatever name the platform uses.
  app.use('*', (c, next) => (isWebhook(c.req.path) ? next() : guard(c, next)));
  app.use(
    '*',
    requestBodyLimits({ rules: bodyLimitRules(deps.config), fallback: FORM_BODY_LIMIT, skip: isWebhook }),
  );
  const failedAuth = throttleFailedAuth(deps.authThrottle ?? authFailureThrottle(), deps.logger);
  for (const path of ['/api/*', '/v1/*', '/mcp', '/metrics']) app.use(path, failedAuth);
  // Audio uploads are not JSON: that route reads its own body.
  const exceptUploads =
    (middleware: MiddlewareHandler): MiddlewareHandler =>
    (c, next) =>
      c.req.path === VOICE_UPLOAD_PATH ? next() : middleware(c, next);
  app.use('/api/*', exceptUploads(jsonBodies()));
  app.use('/api/*', apiAuth({ token: () => deps.config().api_token, database: deps.database }));
  app.use('/api/*', exceptUploads(parsedJsonBodies()));
  if (deps.api) app.route('/api', deps.api);
  if (deps.webhooks) app.route('/webhooks', deps.webhooks);
  if (deps.metrics) {
    const { metrics } = deps;
    app.route(
      '/',
      metricsRoutes(metrics, () => [deps.config().api_token, deps.config().metrics_token]),
    );
  }
  for (const routes of deps.routes ?? []) app.route('/', routes);
  if (deps.mcp) {
    app.use('/mcp', apiAuth({ token: () => deps.config().api_token, database: deps.database }));
    app.route('/mcp', deps.mcp);
  }
  app.notFound((c) =>
    deps.notFoundPage && wantsHtml(c)
      ? deps.notFoundPage(c)
      : c.json({ error: 'not_found', message: `No route ${c.req.method} ${c.req.path}` }, 404),
  );
  app.onError((error, c) => {
    // A body read past its limit: the limit middleware answers 413.
    if (bodyOverflowed(c)) return c.body(null, 413);
    if (c.req.raw.signal.aborted) {
      // The client went away mid-request (an upload cut off): nothing broke, nobody to answer.
      deps.logger.info({ path: c.req.path, reason: errorMessage(error) }, 'request aborted by the client');
      return c.body(null, 400);
    }
    deps.logger.error({ err: error, path: c.req.path }, 'request failed');
    return c.json({ error: 'internal', message: 'Internal error; see the server log.' }, 500);
  });
  return app;
}
