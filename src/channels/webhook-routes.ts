import { Hono } from 'hono';
import type { Logger } from '../logging/index.ts';
import { FailureLimiter } from './failure-limiter.ts';
import type { Gateway } from './gateway.ts';
import { recordWebhookRejection } from './status.ts';
import type { ChannelName } from './types.ts';
import { createWebhookGuard } from './webhook-guard.ts';

/**
 * The `/webhooks` app: each configured channel's routes behind the guard (limits,
 * verification, rate limit of failures, access log). Mounted outside the API's bearer auth:
 * platforms authenticate with their own signatures.
 */
export function webhookRoutes(
  gateway: Gateway,
  deps: {
    logger: Logger;
    limiter?: FailureLimiter;
    onVerification?: (channel: ChannelName, result: 'verified' | 'rejected') => void;
  },
): Hono {
  const app = new Hono();
  const database = gateway.database;
  const guard = createWebhookGuard({
    logger: deps.logger,
    limiter: deps.limiter ?? new FailureLimiter(),
    recordRejection: (channel, reason) => recordWebhookRejection(database, channel, reason),
    onVerification: deps.onVerification,
  });
  for (const adapter of gateway.adapters) {
    const routes = adapter.routes?.(gateway, guard);
    if (routes) app.route('/', routes);
  }
  app.all('*', (c) =>
    c.json(
      {
        error: 'not_found',
        message: `No webhook at ${c.req.path}: that channel is not configured (see steward channels).`,
      },
      404,
    ),
  );
  return app;
}
