import { Hono, type MiddlewareHandler } from 'hono';
import type { ResolvedConfig } from '../config/index.ts';
import type { Database } from '../db/index.ts';
import type { Logger } from '../logging/index.ts';
import { type AuthEnv, apiAuth } from './auth.ts';
import { bodySizeLimit, hostAndOriginGuard, jsonBodies } from './edge.ts';
import type { HttpLifecycle } from './lifecycle.ts';
import { securityHeaders } from './security-headers.ts';

/** Largest JSON body the API reads (a message is at most limits.max_message_chars). */
export const API_BODY_LIMIT = 1024 * 1024;

import { VOICE_UPLOAD_PATH } from './api-voice.ts';
import { healthRoutes } from './health.ts';
import { type MetricsSource, metricsRoutes } from './metrics-route.ts';

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
};

/** The HTTP app. Built without listening, so tests call `app.request()` in-process. */
export function createServerApp(deps: ServerDeps): Hono {
  const app = new Hono();
  app.use('*', securityHeaders());
  if (deps.lifecycle) app.use('*', deps.lifecycle.middleware());
  app.route('/', healthRoutes(deps.database));
  const guard = hostAndOriginGuard(deps.config);
  // Webhooks carry their own signatures and arrive under whatever name the platform uses.
  app.use('*', (c, next) => (c.req.path.startsWith('/webhooks/') ? next() : guard(c, next)));
  // Audio uploads are not JSON and may be larger: that route checks its own body.
  const exceptUploads =
    (middleware: MiddlewareHandler): MiddlewareHandler =>
    (c, next) =>
      c.req.path === VOICE_UPLOAD_PATH ? next() : middleware(c, next);
  app.use('/api/*', exceptUploads(bodySizeLimit(API_BODY_LIMIT)), exceptUploads(jsonBodies()));
  app.use('/api/*', apiAuth({ token: () => deps.config().api_token, database: deps.database }));
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
    app.use(
      '/mcp',
      bodySizeLimit(API_BODY_LIMIT),
      apiAuth({ token: () => deps.config().api_token, database: deps.database }),
    );
    app.route('/mcp', deps.mcp);
  }
  app.notFound((c) => c.json({ error: 'not_found', message: `No route ${c.req.method} ${c.req.path}` }, 404));
  app.onError((error, c) => {
    // A client that hangs up mid-upload is not a server failure: one line, no stack.
    if (c.req.raw.signal.aborted) {
      deps.logger.info({ path: c.req.path }, 'the client closed the connection before its request was read');
      return c.json(
        { error: 'client_closed', message: 'The connection closed before the request arrived.' },
        400,
      );
    }
    deps.logger.error({ err: error, path: c.req.path }, 'request failed');
    return c.json({ error: 'internal', message: 'Internal error; see the server log.' }, 500);
  });
  return app;
}
