import { Hono } from 'hono';
import { z } from 'zod';
import type { Database } from '../db/index.ts';
import { errorMessage } from '../errors.ts';
import { connectAccount, type Integrations, PROVIDERS } from '../integrations/index.ts';
import { ensureUser, userIdProblem } from '../users/index.ts';
import { type AuthEnv, ownerOnly } from './auth.ts';
import { badRequest } from './input.ts';

const connectBody = z
  .object({ user: z.string(), provider: z.enum(PROVIDERS), credentials: z.record(z.string(), z.unknown()) })
  .strict();
const disconnectBody = z.object({ user: z.string(), provider: z.enum(PROVIDERS) }).strict();

/**
 * What `steward connect` / `disconnect` do, for the owner only, so they work while the server
 * owns the embedded database: `POST /api/accounts/connect {user, provider, credentials}` checks
 * the credentials with the provider, then stores them (`{account}`, or 422 with what it answered);
 * `POST /api/accounts/disconnect {user, provider}` → `{removed}`.
 */
export function accountRoutes(deps: {
  database: Database;
  integrations: Integrations;
  settings: () => { apiUrl?: string; hubspotBaseUrl?: string };
}): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  app.use('/accounts/*', ownerOnly('connects accounts'));
  app.post('/accounts/connect', async (c) => {
    const parsed = connectBody.safeParse(await c.req.json().catch(() => null));
    if (!parsed.success)
      return badRequest(
        c,
        `Send JSON {"user": "local", "provider": one of ${PROVIDERS.join(', ')}, "credentials": {…}}.`,
      );
    const { user, provider, credentials } = parsed.data;
    const problem = userIdProblem(user);
    if (problem) return badRequest(c, problem);
    await ensureUser(deps.database, user);
    try {
      // The credentials' shape is the provider's: connectAccount checks them against it.
      const result = await connectAccount(
        deps.integrations,
        deps.settings(),
        user,
        provider,
        credentials as never,
      );
      if (!result.ok) return c.json({ error: 'not_connected', message: result.error }, 422);
      return c.json({ account: result.account });
    } catch (error) {
      return c.json({ error: 'not_connected', message: errorMessage(error) }, 422);
    }
  });
  app.post('/accounts/disconnect', async (c) => {
    const parsed = disconnectBody.safeParse(await c.req.json().catch(() => null));
    if (!parsed.success)
      return badRequest(c, `Send JSON {"user": "local", "provider": one of ${PROVIDERS.join(', ')}}.`);
    return c.json({
      removed: await deps.integrations.credentials.remove(parsed.data.user, parsed.data.provider),
    });
  });
  return app;
}
