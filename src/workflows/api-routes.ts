import { Hono } from 'hono';
import { z } from 'zod';
import { userIdProblem } from '../users/index.ts';
import type { DeliveryReceipt } from './delivery-receipt.ts';
import type { WorkflowRun } from './run-store.ts';
import type { WorkflowScheduler } from './scheduler.ts';

/** The caller as the API's auth middleware sets it (server/auth.ts): the owner or one user. */
type CallerEnv = { Variables: { principal: { userId: string; owner: boolean } } };

const listQuery = z.object({ user: z.string().min(1).optional() }).strict();
const runBody = z
  .object({ name: z.string().min(1, 'name is required'), user: z.string().min(1).optional() })
  .strict();

/**
 * A run as the API and `steward schedules run --json` show it; `delivery` is its output's
 * receipt (`pending` until the outbox has sent it or given up).
 */
export function runView(run: WorkflowRun, delivery: DeliveryReceipt | null = null) {
  return {
    id: run.id,
    name: run.skill.slice(run.skill.indexOf('.') + 1),
    skill: run.skill,
    user: run.userId,
    trigger: run.trigger,
    status: run.status,
    scheduled_for: run.scheduledFor.toISOString(),
    started_at: run.startedAt?.toISOString() ?? null,
    finished_at: run.finishedAt?.toISOString() ?? null,
    turn_id: run.turnId,
    cost_usd: run.costUsd,
    error: run.error,
    delivery,
  };
}

/**
 * Under /api: `GET /schedules?user=ID` → `{schedules: [...]}` (the owner sees every user's, a
 * per-user token its own), `POST /schedules/run {name, user?}` → `{run}` once the run ended.
 */
export function scheduleApiRoutes(scheduler: WorkflowScheduler): Hono<CallerEnv> {
  const app = new Hono<CallerEnv>();
  const scope = (principal: { userId: string; owner: boolean }, requested: string | undefined) => {
    if (principal.owner) return { userId: requested };
    if (requested !== undefined && requested !== principal.userId) return { forbidden: true as const };
    return { userId: principal.userId };
  };
  const forbidden = (userId: string) => ({
    error: 'forbidden',
    message: `This token acts only as user ${userId}; leave "user" out or set it to that.`,
  });

  app.get('/schedules', async (c) => {
    const parsed = listQuery.safeParse(c.req.query());
    if (!parsed.success) return c.json({ error: 'bad_request', message: 'Use ?user=ID (or nothing).' }, 400);
    const requested = parsed.data.user;
    const problem = requested ? userIdProblem(requested) : null;
    if (problem) return c.json({ error: 'bad_request', message: problem }, 400);
    const acting = scope(c.get('principal'), requested);
    if ('forbidden' in acting) return c.json(forbidden(c.get('principal').userId), 403);
    return c.json({ schedules: await scheduler.list(acting.userId) });
  });

  app.post('/schedules/run', async (c) => {
    const parsed = runBody.safeParse(await c.req.json().catch(() => null));
    if (!parsed.success)
      return c.json(
        { error: 'bad_request', message: 'Send JSON {"name": "daily_digest", "user": "local"}.' },
        400,
      );
    const problem = parsed.data.user ? userIdProblem(parsed.data.user) : null;
    if (problem) return c.json({ error: 'bad_request', message: problem }, 400);
    const acting = scope(c.get('principal'), parsed.data.user);
    if ('forbidden' in acting) return c.json(forbidden(c.get('principal').userId), 403);
    const result = await scheduler.runNow(parsed.data.name, acting.userId);
    if ('problem' in result) return c.json({ error: 'not_found', message: result.problem }, 404);
    return c.json({ run: runView(result.run, await scheduler.deliveryOf(result.run)) });
  });
  return app;
}
