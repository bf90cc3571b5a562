import { Hono } from 'hono';
import type { Queryable } from '../../db/index.ts';
import { calendarFeed } from './ics-feed.ts';

/**
 * `GET /ical/<token>.ics`: the local calendar of the user holding `token`, as text/calendar.
 * The token is the only secret (calendar apps cannot send a bearer token); a wrong one is a 404.
 */
export function calendarFeedRoutes(db: Queryable, now: () => Date = () => new Date()): Hono {
  const app = new Hono();
  app.get('/ical/:file', async (c) => {
    const match = /^([A-Za-z0-9_-]+)\.ics$/.exec(c.req.param('file'));
    const feed = match ? await calendarFeed(db, match[1]!, now()) : null;
    if (feed === null) return c.json({ error: 'not_found', message: 'No such calendar feed.' }, 404);
    return c.body(feed, 200, {
      'content-type': 'text/calendar; charset=utf-8',
      'cache-control': 'private, max-age=300',
    });
  });
  return app;
}
