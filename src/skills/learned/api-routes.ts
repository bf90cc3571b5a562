import { Hono } from 'hono';
import { z } from 'zod';
import { userIdProblem } from '../../users/index.ts';
import type { SkillSnapshot } from '../types.ts';
import type { LearnedSkills } from './learned-skills.ts';
import type { SkillVersion } from './skill-ledger.ts';
import { skillOwners, skillUse, templateSkills } from './skill-use.ts';

/** The caller as the API's auth middleware sets it (server/auth.ts): the owner or one user. */
type CallerEnv = { Variables: { principal: { userId: string; owner: boolean } } };

export type SkillApiDeps = {
  learned: LearnedSkills;
  skills: () => SkillSnapshot;
  /** Whether a skill runs code (a handler); the others are templates, counted as such. */
  hasHandler: (handler: string) => boolean;
  now?: () => Date;
};

const userQuery = z.object({ user: z.string().min(1).optional() }).strict();
const rollbackBody = z
  .object({
    to: z.number().int().min(1),
    user: z.string().min(1).optional(),
    reason: z.string().max(500).optional(),
  })
  .strict();

/** A version as `steward skills history --json` prints it (plus the change and diff here). */
export function versionView(version: SkillVersion) {
  return {
    version: version.version,
    at: version.at.toISOString(),
    author: version.author,
    reason: version.reason,
    change: version.change,
    diff: version.diff,
  };
}

/**
 * Under /api, for the CLI when a server owns the data dir: `GET /skills/usage?user=ID` →
 * `{usage: {NAME: {runs, failures, last_used}}}`; `GET /skills/NAME/history?user=ID` →
 * `{name, user, versions}`; `POST /skills/NAME/rollback {to, user?, reason?}` → `{version}`.
 * The owner may name any user; a per-user token acts on its own skills only.
 */
export function skillApiRoutes(deps: SkillApiDeps): Hono<CallerEnv> {
  const app = new Hono<CallerEnv>();
  const now = deps.now ?? (() => new Date());
  const forbidden = (userId: string) => ({
    error: 'forbidden',
    message: `This token acts only as user ${userId}; leave "user" out or set it to that.`,
  });

  /** The user whose ledger a request means, or the response that says why not. */
  const ownerFor = async (
    principal: { userId: string; owner: boolean },
    name: string,
    requested: string | undefined,
  ): Promise<{ userId: string } | { status: 400 | 403 | 404; body: { error: string; message: string } }> => {
    if (requested !== undefined) {
      const problem = userIdProblem(requested);
      if (problem) return { status: 400, body: { error: 'bad_request', message: problem } };
      if (!principal.owner && requested !== principal.userId)
        return { status: 403, body: forbidden(principal.userId) };
      return { userId: requested };
    }
    if (!principal.owner) return { userId: principal.userId };
    const found = await deps.learned.ownerOf(name);
    return 'problem' in found ? { status: 404, body: { error: 'not_found', message: found.problem } } : found;
  };

  app.get('/skills/usage', async (c) => {
    const parsed = userQuery.safeParse(c.req.query());
    if (!parsed.success) return c.json({ error: 'bad_request', message: 'Use ?user=ID (or nothing).' }, 400);
    const principal = c.get('principal');
    const requested = parsed.data.user ?? (principal.owner ? undefined : principal.userId);
    if (requested !== undefined) {
      const problem = userIdProblem(requested);
      if (problem) return c.json({ error: 'bad_request', message: problem }, 400);
      if (!principal.owner && requested !== principal.userId) return c.json(forbidden(principal.userId), 403);
    }
    const templates = templateSkills(deps.skills(), deps.hasHandler);
    const usage = await skillUse(deps.learned.database, {
      userId: requested,
      templates,
      owners: skillOwners(deps.skills()),
    });
    return c.json({
      usage: Object.fromEntries(
        [...usage].map(([skill, use]) => [
          skill,
          { runs: use.runs, failures: use.failures, last_used: use.lastUsed?.toISOString() ?? null },
        ]),
      ),
    });
  });

  app.get('/skills/:name/history', async (c) => {
    const parsed = userQuery.safeParse(c.req.query());
    if (!parsed.success) return c.json({ error: 'bad_request', message: 'Use ?user=ID (or nothing).' }, 400);
    const name = c.req.param('name');
    const owner = await ownerFor(c.get('principal'), name, parsed.data.user);
    if ('status' in owner) return c.json(owner.body, owner.status);
    const versions = await deps.learned.history(owner.userId, name);
    if (versions.length === 0)
      return c.json({ error: 'not_found', message: `${name} has no history for user ${owner.userId}.` }, 404);
    return c.json({ name, user: owner.userId, versions: versions.map(versionView) });
  });

  app.post('/skills/:name/rollback', async (c) => {
    const parsed = rollbackBody.safeParse(await c.req.json().catch(() => null));
    if (!parsed.success)
      return c.json(
        {
          error: 'bad_request',
          message: 'Send JSON {"to": 2, "user": "local", "reason": "why"} (to: a version number).',
        },
        400,
      );
    const name = c.req.param('name');
    const principal = c.get('principal');
    const owner = await ownerFor(principal, name, parsed.data.user);
    if ('status' in owner) return c.json(owner.body, owner.status);
    const change = await deps.learned.rollback(
      { userId: owner.userId, author: principal.userId, turnId: null, at: now() },
      { name, to: parsed.data.to, ...(parsed.data.reason ? { reason: parsed.data.reason } : {}) },
    );
    if (!change.ok) return c.json({ error: 'refused', message: change.problem }, 409);
    return c.json({ name, user: owner.userId, version: versionView(change.version) });
  });
  return app;
}
