import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { html } from 'hono/html';
import type { ResolvedConfig } from '../config/index.ts';
import { stewardCommand } from '../config/index.ts';
import type { Database } from '../db/index.ts';
import { clientAddress } from '../security/index.ts';
import { bodyOverflowed, OWNER_USER } from '../server/index.ts';
import { ensureUser, userOfApiToken } from '../users/index.ts';
import { page, type WebEnv } from './layout.ts';
import { createSession, endSession, redeemLoginCode, SESSION_TTL_MS, sessionOf } from './sessions.ts';
import type { LoginThrottle } from './throttle.ts';

export const SESSION_COOKIE = 'steward_session';
const LOGIN_CSRF_COOKIE = 'steward_login_csrf';

type LoginDeps = { database: Database; config: () => ResolvedConfig; throttle: LoginThrottle };

function isHttps(c: Context, config: ResolvedConfig): boolean {
  if (new URL(c.req.url).protocol === 'https:') return true;
  return Boolean(config.public_url?.startsWith('https:')) && c.req.header('x-forwarded-proto') === 'https';
}

function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

function setSessionCookie(c: Context, config: ResolvedConfig, id: string): void {
  setCookie(c, SESSION_COOKIE, id, {
    path: '/',
    httpOnly: true,
    sameSite: 'Strict',
    secure: isHttps(c, config),
    maxAge: Math.floor(SESSION_TTL_MS / 1000),
  });
}

function loginPage(
  c: Context,
  config: ResolvedConfig,
  options: { error?: string; status?: 200 | 400 | 401 | 429 } = {},
) {
  const csrf = randomBytes(18).toString('base64url');
  setCookie(c, LOGIN_CSRF_COOKIE, csrf, {
    path: '/login',
    httpOnly: true,
    sameSite: 'Strict',
    secure: isHttps(c, config),
    maxAge: 3600,
  });
  return page(c, {
    title: 'Log in',
    status: options.status ?? 200,
    body: html`<form method="post" action="/login" class="card login">
      ${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ''}
      <input type="hidden" name="csrf" value="${csrf}">
      <label for="token">API token</label>
      <input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
      <button type="submit">Log in</button>
      <p class="hint">Use STEWARD_API_TOKEN (the owner), a token from <code>${stewardCommand()} tokens create</code>, or the one-time link that <code>${stewardCommand()} dashboard</code> prints.</p>
    </form>`,
  });
}

/** The session of a request, from its cookie. */
export async function requestSession(c: Context, database: Database) {
  const id = getCookie(c, SESSION_COOKIE);
  if (!id) return null;
  const session = await sessionOf(database, id);
  return session ? { id, session } : null;
}

/** Pages: without a session, 302 to /login. Sets `session` for the page. */
export function requireSession(database: Database): MiddlewareHandler<WebEnv> {
  return async (c, next) => {
    const found = await requestSession(c, database);
    if (!found) return c.redirect('/login', 302);
    c.set('session', found.session);
    c.set('sessionId', found.id);
    return next();
  };
}

/**
 * The posted form's fields; {} for a body that is not a form; null when a form's body cannot
 * be parsed (malformed multipart). A body over its limit rethrows: the edge answers 413.
 */
async function readForm(c: Context): Promise<Record<string, unknown> | null> {
  const type = c.req.header('content-type') ?? '';
  if (!type.includes('application/x-www-form-urlencoded') && !type.includes('multipart/form-data')) return {};
  try {
    return await c.req.parseBody();
  } catch (error) {
    if (bodyOverflowed(c)) throw error;
    return null;
  }
}

/** Form posts and fetches from pages must carry the session's CSRF token (field `csrf` or header X-CSRF-Token). */
export function requireCsrf(): MiddlewareHandler<WebEnv> {
  return async (c, next) => {
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    const expected = c.get('session').csrf;
    let given = c.req.header('x-csrf-token');
    if (!given) {
      const form = await readForm(c);
      if (!form) {
        return page(c, {
          title: 'Form unreadable',
          session: c.get('session'),
          status: 400,
          body: html`<p class="error" role="alert">This form's body could not be read. Go back, reload the page and send it again.</p>`,
        });
      }
      given = typeof form.csrf === 'string' ? form.csrf : undefined;
    }
    if (!given || !sameSecret(given, expected)) {
      return page(c, {
        title: 'Form expired',
        session: c.get('session'),
        status: 403,
        body: html`<p class="error" role="alert">This form's security token is missing or stale. Go back, reload the page and send it again.</p>`,
      });
    }
    return next();
  };
}

/**
 * A failed login (wrong token or code, unreadable form): counted for the address, or once the
 * address has too many, answered 429. A right token is checked before this, so it always logs in.
 */
function failedLogin(
  c: Context,
  deps: LoginDeps,
  failure: { status: 400 | 401; error: string },
): Response | Promise<Response> {
  const address = clientAddress(c);
  const wait = deps.throttle.retryAfter(address);
  if (wait > 0) {
    c.header('Retry-After', String(wait));
    return loginPage(c, deps.config(), {
      status: 429,
      error: `Too many failed logins from your address. Try again in ${wait} seconds (the right token logs in at any time).`,
    });
  }
  deps.throttle.fail(address);
  return loginPage(c, deps.config(), failure);
}

export function loginRoutes(deps: LoginDeps): Hono {
  const app = new Hono();
  app.get('/login', async (c) => {
    if (await requestSession(c, deps.database)) return c.redirect('/chat', 302);
    return loginPage(c, deps.config());
  });

  app.post('/login', async (c) => {
    const config = deps.config();
    const form = await readForm(c);
    if (!form) {
      return failedLogin(c, deps, {
        status: 400,
        error: 'The login form could not be read. Reload the page and enter the token again.',
      });
    }
    const token = typeof form.token === 'string' ? form.token.trim() : '';
    const csrf = typeof form.csrf === 'string' ? form.csrf : undefined;
    const cookie = getCookie(c, LOGIN_CSRF_COOKIE);
    // The form's token must match its cookie when both came; a login post from another site is
    // refused before this by the Origin check, and the session cookie is SameSite=Strict.
    if (csrf !== undefined && cookie !== undefined && !sameSecret(csrf, cookie)) {
      return loginPage(c, config, { status: 401, error: 'The login form expired. Enter the token again.' });
    }
    let who: { userId: string; owner: boolean } | null = null;
    if (token && token.length <= 500) {
      if (config.api_token && sameSecret(token, config.api_token)) who = { userId: OWNER_USER, owner: true };
      else {
        const userId = await userOfApiToken(deps.database, token);
        if (userId) who = { userId, owner: false };
      }
    }
    if (!who) {
      return failedLogin(c, deps, {
        status: 401,
        error: token ? 'That token is not valid. Check it and try again.' : 'Enter your API token.',
      });
    }
    await ensureUser(deps.database, who.userId);
    const { id } = await createSession(deps.database, who);
    setSessionCookie(c, config, id);
    deleteCookie(c, LOGIN_CSRF_COOKIE, { path: '/login' });
    return c.redirect('/chat', 303);
  });

  app.get('/login/once/:code', async (c) => {
    const who = await redeemLoginCode(deps.database, c.req.param('code'));
    if (!who) {
      return failedLogin(c, deps, {
        status: 401,
        error: `That login link is unknown, used or expired (links last 10 minutes). Run \`${stewardCommand()} dashboard\` for a new one.`,
      });
    }
    const { id } = await createSession(deps.database, who);
    setSessionCookie(c, deps.config(), id);
    return c.redirect('/chat', 302);
  });

  app.post('/logout', async (c) => {
    const found = await requestSession(c, deps.database);
    if (found) {
      const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
      const given = typeof form.csrf === 'string' ? form.csrf : c.req.header('x-csrf-token');
      if (!given || !sameSecret(given, found.session.csrf)) {
        return page(c, {
          title: 'Form expired',
          session: found.session,
          status: 403,
          body: html`<p class="error" role="alert">This form's security token is missing or stale. Reload the page and log out again.</p>`,
        });
      }
      await endSession(deps.database, found.id);
    }
    deleteCookie(c, SESSION_COOKIE, { path: '/' });
    return c.redirect('/login', 303);
  });
  return app;
}
