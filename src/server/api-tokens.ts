import { Hono } from 'hono';
import { z } from 'zod';
import type { Database } from '../db/index.ts';
import { createApiToken, ensureUser, listApiTokens, revokeApiToken, userIdProblem } from '../users/index.ts';
import { type AuthEnv, ownerOnly } from './auth.ts';
import { badRequest } from './input.ts';

const createBody = z.object({ user: z.string(), name: z.string().max(100).optional() }).strict();

/**
 * Per-user API tokens, for the owner only: `POST /api/tokens {user, name?}` → `{id, user, token}`
 * (the token is shown this once), `GET /api/tokens[?user=]`, `DELETE /api/tokens/:id`.
 */
export function tokenRoutes(database: Database): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const owner = ownerOnly('manages tokens');
  app.use('/tokens/*', owner);
  app.use('/tokens', owner);
  app.post('/tokens', async (c) => {
    const parsed = createBody.safeParse(await c.req.json().catch(() => null));
    if (!parsed.success) return badRequest(c, 'Send JSON {"user": "<user id>", "name": "laptop"}.');
    const problem = userIdProblem(parsed.data.user);
    if (problem) return badRequest(c, problem);
    await ensureUser(database, parsed.data.user);
    const created = await createApiToken(database, parsed.data.user, parsed.data.name ?? null);
    return c.json(
      { id: created.record.id, user: created.record.userId, name: created.record.name, token: created.token },
      201,
    );
  });
  app.get('/tokens', async (c) => c.json({ tokens: await listApiTokens(database, c.req.query('user')) }));
  app.delete('/tokens/:id', async (c) => {
    const revoked = await revokeApiToken(database, c.req.param('id'));
    if (!revoked)
      return c.json({ error: 'not_found', message: `No active token ${c.req.param('id')}.` }, 404);
    return c.json({ revoked: c.req.param('id') });
  });
  return app;
}
