import { Hono } from 'hono';
import { z } from 'zod';
import type { Runtime } from '../runtime.ts';
import { ensureUser, userIdProblem } from '../users/index.ts';

const runBody = z.object({
  command: z.string().min(1, 'command is required'),
  user: z.string().default('local'),
});

/** `POST /api/run {command, user?}` → `{status, content, metadata}`: one command, no LLM. */
export function runRoutes(runtime: Pick<Runtime, 'database' | 'executor'>): Hono {
  const app = new Hono();
  app.post('/run', async (c) => {
    const parsed = runBody.safeParse(await c.req.json().catch(() => null));
    if (!parsed.success) {
      return c.json({ error: 'bad_request', message: 'Send JSON {"command": "...", "user": "local"}.' }, 400);
    }
    const problem = userIdProblem(parsed.data.user);
    if (problem) return c.json({ error: 'bad_request', message: problem }, 400);
    const user = await ensureUser(runtime.database, parsed.data.user);
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
