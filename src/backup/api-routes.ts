import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { type Context, Hono } from 'hono';
import type { Database } from '../db/index.ts';
import { errorMessage, StewardError } from '../errors.ts';
import type { Logger } from '../logging/index.ts';
import { backupsDir, writeBackup } from './backup.ts';
import { exportUser } from './export-user.ts';
import { forgetUser } from './forget-user.ts';
import { packFolder } from './pack-folder.ts';
import { stewardVersion } from './steward-version.ts';

export type DataRoutesDeps = { database: Database; dataDir: string; skillsDir: string; logger: Logger };

type OwnerEnv = { Variables: { principal: { userId: string; owner: boolean } } };

const STATUS: Readonly<Record<string, 400 | 404 | 409>> = {
  user_is_owner: 400,
  user_not_found: 404,
  user_busy: 409,
};

/**
 * What the CLI relays when a server owns the data dir, for the owner only:
 * `POST /api/backup` → the archive (application/gzip, streamed while it is written),
 * `POST /api/export {user}` → a checked archive of the user's export,
 * `POST /api/users/delete {user}` → what was removed.
 */
export function dataRoutes(deps: DataRoutesDeps): Hono<OwnerEnv> {
  const app = new Hono<OwnerEnv>();
  for (const route of ['/backup', '/export', '/users/delete'])
    app.use(route, async (c, next) => {
      if (!c.get('principal').owner)
        return c.json(
          {
            error: 'forbidden',
            message: "Only the owner's token (STEWARD_API_TOKEN) backs up, exports or deletes users.",
          },
          403,
        );
      return next();
    });
  app.post('/backup', (c) =>
    stream(c, deps.logger, 'backup', (out) =>
      writeBackup({ ...deps, stewardVersion: stewardVersion() }, out).then(() => undefined),
    ),
  );
  app.post('/export', async (c) => {
    const user = await userOf(c);
    if (typeof user !== 'string') return user;
    await mkdir(backupsDir(deps.dataDir), { recursive: true, mode: 0o700 });
    const work = await mkdtemp(path.join(backupsDir(deps.dataDir), '.export-'));
    const dir = path.join(work, 'export');
    try {
      await exportUser(deps, user, dir);
    } catch (error) {
      await rm(work, { recursive: true, force: true });
      return failure(c, error);
    }
    return stream(c, deps.logger, 'export', (out) =>
      packFolder(dir, out).finally(() => rm(work, { recursive: true, force: true })),
    );
  });
  app.post('/users/delete', async (c) => {
    const user = await userOf(c);
    if (typeof user !== 'string') return user;
    try {
      const report = await forgetUser(deps, user);
      deps.logger.warn({ user, rows: report.rows.length, files: report.files }, 'user deleted');
      return c.json(report);
    } catch (error) {
      return failure(c, error);
    }
  });
  return app;
}

async function userOf(c: Context<OwnerEnv>): Promise<string | Response> {
  const body = (await c.req.json().catch(() => null)) as { user?: unknown } | null;
  if (!body || typeof body.user !== 'string' || body.user === '')
    return c.json({ error: 'bad_request', message: 'Send JSON {"user": "<user id>"}.' }, 400);
  return body.user;
}

function failure(c: Context<OwnerEnv>, error: unknown): Response {
  if (error instanceof StewardError) {
    const status = STATUS[error.code] ?? 400;
    return c.json({ error: error.code, message: error.message }, status);
  }
  throw error;
}

/** Streams what `write` writes; a failure midway cuts the stream short (the CLI's checksum check then refuses it). */
function stream(
  _c: Context<OwnerEnv>,
  logger: Logger,
  what: string,
  write: (out: PassThrough) => Promise<void>,
): Response {
  const out = new PassThrough();
  write(out).catch((error: unknown) => {
    logger.error({ err: error }, `${what} failed: ${errorMessage(error)}`);
    out.destroy(error as Error);
  });
  return new Response(Readable.toWeb(out) as ReadableStream, {
    headers: { 'content-type': 'application/gzip', 'cache-control': 'no-store' },
  });
}
