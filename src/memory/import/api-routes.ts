import { Hono } from 'hono';
import { z } from 'zod';
import type { Database } from '../../db/index.ts';
import { HISTORY_FORMATS } from './history.ts';
import { importHistory } from './import-history.ts';

/** The caller as the API's auth middleware sets it (server/auth.ts): the owner or one user. */
type CallerEnv = { Variables: { principal: { userId: string; owner: boolean } } };

const importBody = z
  .object({
    format: z.enum(HISTORY_FORMATS),
    user: z.string().min(1).optional(),
    messages: z
      .array(
        z
          .object({
            conversation: z.string().min(1),
            title: z.string().nullable(),
            id: z.string().min(1),
            at: z.iso.datetime({ offset: true }),
            speaker: z.string().nullable(),
            role: z.enum(['user', 'assistant']),
            text: z.string().min(1),
          })
          .strict(),
      )
      .max(5_000),
  })
  .strict();

/**
 * Under /api: `POST /memory/import {format, user?, messages: [...]}` → `{added, duplicates,
 * conversations}`. `steward memory import` reads the export itself and sends it here in batches
 * while a server owns the database. The owner imports for anyone (default: the owner's own
 * user `local`); a per-user token only for its user.
 */
export function memoryImportRoutes(deps: {
  database: Database;
  /** The user the owner imports for when the body names none. */
  ownerUser: string;
  /** Creates the user when it does not exist yet (as `steward run --user` does). */
  ensureUser: (userId: string) => Promise<unknown>;
}): Hono<CallerEnv> {
  const { database } = deps;
  const app = new Hono<CallerEnv>();
  app.post('/memory/import', async (c) => {
    const parsed = importBody.safeParse(await c.req.json().catch(() => null));
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return c.json(
        { error: 'bad_request', message: `${issue?.path.join('.') || 'body'}: ${issue?.message}` },
        400,
      );
    }
    const principal = c.get('principal');
    const requested = parsed.data.user;
    if (!principal.owner && requested !== undefined && requested !== principal.userId) {
      return c.json(
        {
          error: 'forbidden',
          message: `This token acts only as user ${principal.userId}; leave "user" out or set it to that.`,
        },
        403,
      );
    }
    const userId = principal.owner ? (requested ?? deps.ownerUser) : principal.userId;
    await deps.ensureUser(userId);
    const summary = await importHistory(
      database,
      userId,
      parsed.data.format,
      parsed.data.messages.map((message) => ({ ...message, at: new Date(message.at) })),
    );
    return c.json(summary);
  });
  return app;
}
