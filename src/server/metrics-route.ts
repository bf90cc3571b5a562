import { Hono } from 'hono';
import { bearerAuthAny } from './auth.ts';

/** Renders the Prometheus text exposition (the metrics folder's registry). */
export type MetricsSource = { render(): Promise<{ contentType: string; body: string }> };

/**
 * `GET /metrics`: requires `Authorization: Bearer` with the API token or the metrics token
 * when either is set (read per request: hot reload); open otherwise, like /api.
 */
export function metricsRoutes(metrics: MetricsSource, tokens: () => Array<string | undefined>): Hono {
  const app = new Hono();
  app.get('/metrics', bearerAuthAny(tokens, 'STEWARD_API_TOKEN or STEWARD_METRICS_TOKEN'), async (c) => {
    const { contentType, body } = await metrics.render();
    return c.body(body, 200, { 'content-type': contentType });
  });
  return app;
}
