import { Hono } from 'hono';
import { z } from 'zod';
import type { Database } from '../db/index.ts';
import { dailyWebCalls } from '../integrations/index.ts';
import { dailyUsage } from '../llm/index.ts';
import { type AuthEnv, actingUser } from './auth.ts';

const usageQuery = z
  .object({
    days: z.coerce.number().int().min(1).max(366).default(30),
    user: z.string().min(1).optional(),
  })
  .strict();

/**
 * `GET /api/usage?days=30&user=ID` → `{days: [{date, user, model, calls, prompt_tokens,
 * cached_tokens, completion_tokens, cost_usd}], web_calls: [{date, user, searches, fetches,
 * calls}]}`. The owner sees every user (or one); a per-user token sees only its own user.
 */
export function usageRoutes(deps: { database: Database }): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  app.get('/usage', async (c) => {
    const parsed = usageQuery.safeParse(c.req.query());
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return c.json(
        {
          error: 'bad_request',
          message: `${issue?.path.join('.') || 'query'}: ${issue?.message}. Use ?days=1..366&user=ID.`,
        },
        400,
      );
    }
    let userId = parsed.data.user;
    if (userId !== undefined || !c.get('principal').owner) {
      const acting = actingUser(c, userId);
      if ('response' in acting) return acting.response;
      userId = acting.userId;
    }
    const days = await dailyUsage(deps.database, { days: parsed.data.days, userId });
    const webCalls = await dailyWebCalls(deps.database, { days: parsed.data.days, userId });
    return c.json({ days, web_calls: webCalls });
  });
  return app;
}
