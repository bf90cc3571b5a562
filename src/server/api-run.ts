import { Hono } from 'hono';
import { z } from 'zod';
import type { Database } from '../db/index.ts';
import type { SkillExecutor } from '../skills/index.ts';
import { ensureUser, userIdProblem } from '../users/index.ts';
import { type AuthEnv, actingUser } from './auth.ts';
import { badRequest, textProblem } from './input.ts';

const runBody = z
  .object({
    command: z.string().min(1, 'command is required'),
    user: z.string().optional(),
  })
  .strict();

/** `POST /api/run {command, user?}` → `{status, content, metadata}`: one command, no LLM. */
export function runRoutes(runtime: { database: Database; executor: SkillExecutor }): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  app.post('/run', async (c) => {
    const parsed = runBody.safeParse(await c.req.json().catch(() => null));
    if (!parsed.success) return badRequest(c, 'Send JSON {"command": "...", "user": "local"}.');
    const acting = actingUser(c, parsed.data.user);
    if ('response' in acting) return acting.response;
    const problem = userIdProblem(acting.userId) ?? textProblem('command', parsed.data.command);
    if (problem) return badRequest(c, problem);
    const user = await ensureUser(runtime.database, acting.userId);
    const outcome = await runtime.executor.execute({
      command: parsed.data.command,
      caller: { kind: 'cli' },
      user: { id: user.id, timezone: user.timezone },
      channel: 'api',
      // A direct command from the (authenticated) user, not an agent's: nothing for the
      // sentinel to check, and it must work with no LLM configured.
      confirmed: true,
      signal: c.req.raw.signal,
    });
    return c.json({ status: outcome.status, content: outcome.content, metadata: outcome.metadata ?? {} });
  });
  return app;
}
