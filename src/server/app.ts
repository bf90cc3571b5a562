import { Hono } from 'hono';
import type { ResolvedConfig } from '../config/index.ts';
import type { Database } from '../db/index.ts';
import type { Logger } from '../logging/logger.ts';
import { bearerAuth } from './auth.ts';
import { healthRoutes } from './health.ts';

export type ServerDeps = {
  database: Database;
  logger: Logger;
  config: () => ResolvedConfig;
  /** Routes mounted under /api (behind the bearer token). */
  api?: Hono;
};

/** The HTTP app. Built without listening, so tests call `app.request()` in-process. */
export function createServerApp(deps: ServerDeps): Hono {
  const app = new Hono();
  app.route('/', healthRoutes(deps.database));
  app.use(
    '/api/*',
    bearerAuth(() => deps.config().api_token),
  );
  if (deps.api) app.route('/api', deps.api);
  app.notFound((c) => c.json({ error: 'not_found', message: `No route ${c.req.method} ${c.req.path}` }, 404));
  app.onError((error, c) => {
    deps.logger.error({ err: error, path: c.req.path }, 'request failed');
    return c.json({ error: 'internal', message: 'Internal error; see the server log.' }, 500);
  });
  return app;
}
