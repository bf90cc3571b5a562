import { type Context, Hono } from 'hono';
import { html } from 'hono/html';
import type { TurnHub } from '../agents/index.ts';
import type { ResolvedConfig } from '../config/index.ts';
import type { Database } from '../db/index.ts';
import type { LlmClient } from '../llm/index.ts';
import { type AuthEnv, isLoopbackHost, OWNER_USER } from '../server/index.ts';
import { ensureUser, userIdProblem } from '../users/index.ts';
import { assetRoutes } from './assets.ts';
import { page } from './layout.ts';
import { loginRoutes, requestSession } from './login.ts';
import { openAiRoutes } from './openai-api.ts';
import { type PageDeps, pageRoutes } from './pages/index.ts';
import { createLoginCode } from './sessions.ts';
import { LoginThrottle } from './throttle.ts';

export { escapeHtml, markdownToHtml } from './markdown.ts';
export { OPENAI_CHANNEL, OPENAI_MODEL, openAiConversationId, openAiRoutes } from './openai-api.ts';
export { WEB_CHANNEL } from './pages/index.ts';
export { createLoginCode, LOGIN_CODE_TTL_MS, redeemLoginCode } from './sessions.ts';
export { LoginThrottle } from './throttle.ts';
export { waves } from './turn-view.ts';

export type WebDeps = Omit<PageDeps, 'database' | 'turnEvents'> & {
  database: Database;
  /** The model itself, for /v1 clients' housekeeping requests (no turn). */
  llm: LlmClient;
  turnEvents: TurnHub;
  config: () => ResolvedConfig;
  throttle?: LoginThrottle;
};

/**
 * The dashboard (login, pages, assets) and the OpenAI-compatible API, mounted at the root.
 * Pages need a session cookie; /v1 needs the API token.
 */
export function webRoutes(deps: WebDeps): Hono {
  const app = new Hono();
  const throttle = deps.throttle ?? new LoginThrottle();
  app.route('/', assetRoutes());
  app.route('/', openAiRoutes(deps));
  app.route('/', loginRoutes({ database: deps.database, config: deps.config, throttle }));
  app.route('/', pageRoutes(deps));
  return app;
}

/**
 * The page a browser gets for a mistyped URL (the server answers API clients in JSON): with the
 * menu when logged in, a way to log in otherwise.
 */
export function notFoundPage(database: Database): (c: Context) => Promise<Response> {
  return async (c) => {
    const session = (await requestSession(c, database))?.session ?? null;
    return page(c, {
      title: 'Not found',
      session,
      status: 404,
      body: html`<p class="empty" data-not-found>There is no page at <code>${c.req.path.slice(0, 200)}</code>.</p>
        <p>${session ? html`Go to <a href="/chat">Chat</a>, <a href="/tasks">Tasks</a> or another page in the menu.` : html`<a href="/login">Log in</a> to reach the dashboard.`}</p>`,
    });
  };
}

/** Where a browser on this machine reaches a server bound to host:port. */
export function dashboardBase(host: string, port: number): string {
  const bare = host.replace(/^\[|\]$/g, '');
  if (isLoopbackHost(bare) || bare === '0.0.0.0' || bare === '::') return `http://127.0.0.1:${port}`;
  return `http://${bare.includes(':') ? `[${bare}]` : bare}:${port}`;
}

/** The URL a one-time code logs in at. */
export function loginLink(base: string, code: string): string {
  return `${base.replace(/\/+$/, '')}/login/once/${code}`;
}

/** Under /api, owner only: `POST /dashboard/login-link {user?}` → `{code, path, expiresInSeconds}` (for `steward dashboard`). */
export function dashboardApiRoutes(database: Database): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  app.post('/dashboard/login-link', async (c) => {
    if (!c.get('principal').owner) {
      return c.json({ error: 'forbidden', message: 'Only the owner token makes login links.' }, 403);
    }
    const body = (await c.req.json().catch(() => ({}))) as { user?: unknown };
    const userId = typeof body.user === 'string' ? body.user : OWNER_USER;
    const problem = userIdProblem(userId);
    if (problem) return c.json({ error: 'bad_request', message: problem }, 400);
    await ensureUser(database, userId);
    const code = await createLoginCode(database, { userId, owner: userId === OWNER_USER });
    return c.json({ code, path: `/login/once/${code}`, expiresInSeconds: 600 });
  });
  return app;
}
