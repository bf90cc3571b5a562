import type { Context } from 'hono';
import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import type { WebSession } from './sessions.ts';

export type Html = HtmlEscapedString | Promise<HtmlEscapedString>;
export type WebEnv = { Variables: { session: WebSession; sessionId: string } };

/** No inline script anywhere: scripts and styles come from /assets (served from the package). */
export const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const NAV: Array<[string, string]> = [
  ['/chat', 'Chat'],
  ['/turns', 'Turns'],
  ['/skills', 'Skills'],
  ['/tasks', 'Tasks'],
  ['/memories', 'Memories'],
  ['/schedules', 'Schedules'],
  ['/inbox', 'Inbox'],
  ['/channels', 'Channels'],
  ['/usage', 'Usage'],
];

export function setPageHeaders(c: Context): void {
  c.header('Content-Security-Policy', CSP);
  c.header('X-Content-Type-Options', 'nosniff');
  c.header('Referrer-Policy', 'same-origin');
  c.header('X-Frame-Options', 'DENY');
  c.header('Cache-Control', 'no-store');
}

export function page(
  c: Context,
  options: {
    title: string;
    session?: WebSession | null;
    body: Html;
    scripts?: string[];
    status?: 200 | 400 | 401 | 403 | 404 | 429;
  },
): Response | Promise<Response> {
  setPageHeaders(c);
  const { session } = options;
  const current = c.req.path;
  const nav = session
    ? html`<nav aria-label="Main">
        <ul>
          ${[...NAV, ...(session.owner ? [['/logs', 'Logs'] as [string, string]] : [])].map(
            ([href, label]) =>
              html`<li><a href="${href}"${current === href || current.startsWith(`${href}/`) ? html` aria-current="page"` : ''}>${label}</a></li>`,
          )}
        </ul>
        <form method="post" action="/logout" class="logout">
          <input type="hidden" name="csrf" value="${session.csrf}">
          <span class="who">${session.userId}${session.owner ? ' (owner)' : ''}</span>
          <button type="submit">Log out</button>
        </form>
      </nav>`
    : '';
  const document = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · Steward</title>
<link rel="icon" href="/favicon.ico" type="image/svg+xml">
<link rel="stylesheet" href="/assets/app.css">
${(options.scripts ?? []).map((name) => html`<script src="/assets/${name}" defer></script>`)}
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header><a class="brand" href="/">Steward</a>${nav}</header>
<main id="main" tabindex="-1">
<h1>${options.title}</h1>
${options.body}
</main>
</body>
</html>`;
  return c.html(document, options.status ?? 200);
}

export function formatDate(date: Date | null | undefined): string {
  if (!date) return '';
  return date.toISOString().replace('T', ' ').slice(0, 19);
}

export function formatCost(usd: number): string {
  return `$${usd < 0.01 && usd > 0 ? usd.toFixed(5) : usd.toFixed(4)}`;
}

/** A hidden CSRF field for a form. */
export const csrfField = (session: WebSession) =>
  html`<input type="hidden" name="csrf" value="${session.csrf}">`;
