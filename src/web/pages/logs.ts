import { Hono } from 'hono';
import { html } from 'hono/html';
import { streamSSE } from 'hono/streaming';
import {
  followLog,
  LOG_LEVELS,
  type LogEntry,
  type LogLevelName,
  logTail,
  parseLogLine,
} from '../../logging/index.ts';
import { page, type WebEnv } from '../layout.ts';
import type { PageDeps } from './page-deps.ts';

const SHOWN = 300;
/** How far back the page looks for lines of the chosen level. */
const SCANNED = 5000;
const LEVEL_NAMES = Object.keys(LOG_LEVELS) as LogLevelName[];

const levelOf = (value: string | undefined): LogLevelName =>
  LEVEL_NAMES.find((name) => name === value) ?? 'info';
/** A line passes at or above the level; a line that is not a JSON record always does. */
const passes = (entry: LogEntry, level: LogLevelName) =>
  entry.levelValue === 0 || entry.levelValue >= LOG_LEVELS[level];

/**
 * The server log, owner only: its last lines at or above a level, and then every new one as it
 * is written (`/logs/stream`, server-sent events), read as `steward logs --follow` reads it.
 */
export function logRoutes(deps: PageDeps): Hono<WebEnv> {
  const app = new Hono<WebEnv>();

  app.get('/logs', (c) => {
    const session = c.get('session');
    if (!session.owner) {
      return page(c, {
        title: 'Logs',
        session,
        status: 403,
        body: html`<p class="error">Only the owner sees the server log.</p>`,
      });
    }
    if (!deps.logFile) {
      return page(c, {
        title: 'Logs',
        session,
        body: html`<p class="empty">This server keeps no log file (<code>logs.file: false</code>), so there is nothing to show here.</p>`,
      });
    }
    const level = levelOf(c.req.query('level'));
    const entries = logTail(deps.logFile, SCANNED)
      .lines.map(parseLogLine)
      .filter((entry) => passes(entry, level))
      .slice(-SHOWN);
    return page(c, {
      title: 'Logs',
      session,
      scripts: ['logs.js'],
      body: html`<form method="get" action="/logs" class="filters" aria-label="Filter the log">
          <label>Level at least <select name="level" id="log-level">${LEVEL_NAMES.map(
            (name) => html`<option value="${name}"${name === level ? html` selected` : ''}>${name}</option>`,
          )}</select></label>
          <button type="submit">Show</button>
          <span class="meta" id="log-live" role="status">The last ${SHOWN} lines at ${level} or above; new lines appear as they are written.</span>
        </form>
        <ol class="log" id="log-lines" data-level="${level}">${entries.map(logLine)}</ol>
        ${entries.length ? '' : html`<p class="empty" id="log-empty">No ${level} lines or above yet.</p>`}`,
    });
  });

  app.get('/logs/stream', (c) => {
    const session = c.get('session');
    if (!session.owner) return c.text('Only the owner sees the server log.', 403);
    const file = deps.logFile;
    if (!file) return c.text('This server keeps no log file.', 404);
    const level = levelOf(c.req.query('level'));
    return streamSSE(c, async (stream) => {
      const stop = new AbortController();
      c.req.raw.signal.addEventListener('abort', () => stop.abort());
      stream.onAbort(() => stop.abort());
      // An hour at most: the page reconnects (EventSource does) and starts from the end again.
      const timer = setTimeout(() => stop.abort(), 60 * 60_000);
      timer.unref();
      const pending: string[] = [];
      const follow = followLog(
        file,
        logTail(file, 0).size,
        (line) => {
          const entry = parseLogLine(line);
          if (passes(entry, level)) pending.push(JSON.stringify(entry));
        },
        stop.signal,
      );
      let quiet = 0;
      while (!stop.signal.aborted) {
        const data = pending.shift();
        if (data) {
          await stream.writeSSE({ event: 'line', data });
          quiet = 0;
          continue;
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
        // A comment now and then keeps proxies from closing a quiet stream.
        if (++quiet % 60 === 0) await stream.write(': keep-alive\n\n');
      }
      clearTimeout(timer);
      await follow;
    });
  });
  return app;
}

function logLine(entry: LogEntry) {
  return html`<li class="log-line level-${entry.level ?? 'text'}"><span class="log-time">${entry.time ? entry.time.replace('T', ' ').slice(0, 19) : ''}</span> <span class="badge">${entry.level ?? 'text'}</span> <span class="log-msg">${entry.msg}</span>${entry.fields ? html` <span class="log-fields">${entry.fields}</span>` : ''}</li>`;
}
