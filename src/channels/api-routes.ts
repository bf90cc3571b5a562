import { Hono, type MiddlewareHandler } from 'hono';
import { z } from 'zod';
import { getUser, setPrimaryChannel, userIdProblem } from '../users/index.ts';
import type { Gateway } from './gateway.ts';
import { pendingPairings } from './pairing.ts';
import { CHANNEL_NAMES } from './types.ts';

/** The caller as the API's auth middleware sets it (server/auth.ts): the owner or one user. */
type CallerEnv = { Variables: { principal: { userId: string; owner: boolean } } };

/** Admitting people and joining identities is the owner's call, never another user's token. */
const ownerOnly: MiddlewareHandler<CallerEnv> = async (c, next) => {
  if (!c.get('principal')?.owner) {
    return c.json({ error: 'forbidden', message: 'Only the owner (STEWARD_API_TOKEN) may do this.' }, 403);
  }
  return next();
};

const approveBody = z.object({ code: z.string().min(1), as: z.string().min(1).optional() });
const linkBody = z.object({ identity: z.string().min(3), user: z.string().min(1) });
const primaryBody = z.object({ user: z.string().min(1), channel: z.enum(CHANNEL_NAMES).nullable() });

/** Splits `CHANNEL:SENDER` at its first colon (Google Chat senders contain a slash, never a colon). */
export function parseIdentity(identity: string): { channel: string; senderId: string } | null {
  const match = /^([a-z]+):(.+)$/.exec(identity.trim());
  return match ? { channel: match[1]!, senderId: match[2]! } : null;
}

/**
 * Under /api, for the owner only: `GET /pairing` (`{pending, owner_paired}`), `POST /pairing/approve {code, as?}`,
 * `POST /users/link {identity, user}`, `POST /users/primary {user, channel}`, `GET /channels`.
 */
export function channelApiRoutes(gateway: Gateway): Hono<CallerEnv> {
  const app = new Hono<CallerEnv>();
  app.use('/pairing/*', ownerOnly);
  app.use('/pairing', ownerOnly);
  app.use('/users/link', ownerOnly);
  app.use('/users/primary', ownerOnly);
  app.use('/channels', ownerOnly);
  app.get('/pairing', async (c) =>
    c.json({
      pending: await pendingPairings(gateway.database, gateway.now()),
      owner_paired: await gateway.ownerPaired(),
    }),
  );
  app.post('/pairing/approve', async (c) => {
    const parsed = approveBody.safeParse(await c.req.json().catch(() => null));
    if (!parsed.success)
      return c.json(
        { error: 'bad_request', message: 'Send JSON {"code": "ABCD2345", "as": "local" (optional)}.' },
        400,
      );
    const approval = await gateway.approvePairing(parsed.data.code, { as: parsed.data.as });
    if (!approval.ok) return c.json({ error: 'pairing_failed', message: approval.problem }, 404);
    return c.json({
      approved: approval.request.code,
      channel: approval.request.channel,
      sender: approval.request.senderId,
      user: approval.userId,
    });
  });
  app.post('/users/link', async (c) => {
    const parsed = linkBody.safeParse(await c.req.json().catch(() => null));
    const identity = parsed.success ? parseIdentity(parsed.data.identity) : null;
    if (!parsed.success || !identity) {
      return c.json(
        { error: 'bad_request', message: 'Send JSON {"identity": "telegram:12345", "user": "local"}.' },
        400,
      );
    }
    const problem = userIdProblem(parsed.data.user);
    if (problem) return c.json({ error: 'bad_request', message: problem }, 400);
    await gateway.linkSender(identity.channel, identity.senderId, parsed.data.user);
    return c.json({ linked: `${identity.channel}:${identity.senderId}`, user: parsed.data.user });
  });
  app.post('/users/primary', async (c) => {
    const parsed = primaryBody.safeParse(await c.req.json().catch(() => null));
    if (!parsed.success) {
      return c.json(
        {
          error: 'bad_request',
          message: `Send JSON {"user": "local", "channel": one of ${CHANNEL_NAMES.join(', ')} or null}.`,
        },
        400,
      );
    }
    if (!(await getUser(gateway.database, parsed.data.user))) {
      return c.json({ error: 'not_found', message: `No user ${parsed.data.user}.` }, 404);
    }
    await setPrimaryChannel(gateway.database, parsed.data.user, parsed.data.channel);
    return c.json({ user: parsed.data.user, primary: parsed.data.channel });
  });
  app.get('/channels', async (c) => c.json({ channels: await gateway.status() }));
  return app;
}
