import { randomBytes } from 'node:crypto';
import type ICAL from 'ical.js';
import type { Queryable } from '../../db/index.ts';
import { wallClock } from '../../time/index.ts';
import { ical } from './ical.ts';
import { allLocalEvents, type EventRow } from './local-calendar.ts';
import { addTimezones } from './vtimezone.ts';

/** The user's secret feed token, created on first use; `rotate` replaces it (the old URL stops working). */
export async function calendarFeedToken(
  db: Queryable,
  userId: string,
  options: { rotate?: boolean } = {},
): Promise<string> {
  const fresh = randomBytes(24).toString('base64url');
  if (options.rotate) {
    const rows = await db.query<{ token: string }>(
      `INSERT INTO calendar_feeds (user_id, token) VALUES ($1, $2)
       ON CONFLICT (user_id) DO UPDATE SET token = EXCLUDED.token, created_at = now() RETURNING token`,
      [userId, fresh],
    );
    return rows[0]!.token;
  }
  await db.query(
    'INSERT INTO calendar_feeds (user_id, token) VALUES ($1, $2) ON CONFLICT (user_id) DO NOTHING',
    [userId, fresh],
  );
  const rows = await db.query<{ token: string }>('SELECT token FROM calendar_feeds WHERE user_id = $1', [
    userId,
  ]);
  return rows[0]!.token;
}

/** The ICS text of the feed with `token`, or null when no user has that token. */
export async function calendarFeed(
  db: Queryable,
  token: string,
  now: Date = new Date(),
): Promise<string | null> {
  if (!/^[A-Za-z0-9_-]{16,64}$/.test(token)) return null;
  const rows = await db.query<{ user_id: string }>('SELECT user_id FROM calendar_feeds WHERE token = $1', [
    token,
  ]);
  const userId = rows[0]?.user_id;
  if (!userId) return null;
  return buildIcs(await allLocalEvents(db, userId), now);
}

/**
 * VCALENDAR of the rows. One-off events use UTC DTSTART/DTEND; recurring ones keep their
 * wall-clock time with TZID (the IANA name) so the rule repeats at the same local time, and
 * each TZID used has its VTIMEZONE.
 */
export function buildIcs(rows: readonly EventRow[], now: Date): string {
  const calendar = new (ical().Component)(['vcalendar', [], []]);
  calendar.addPropertyWithValue('prodid', '-//Steward//Local calendar//EN');
  calendar.addPropertyWithValue('version', '2.0');
  calendar.addPropertyWithValue('calscale', 'GREGORIAN');
  calendar.addPropertyWithValue('x-wr-calname', 'Steward');
  const zoned = rows.filter((row) => row.rrule);
  addTimezones(
    calendar,
    zoned.map((row) => ({ timezone: row.timezone, start: new Date(row.starts_at) })),
    now,
  );
  for (const row of rows) {
    const event = new (ical().Component)('vevent');
    event.addPropertyWithValue('uid', `${row.id}@steward`);
    event.addPropertyWithValue('dtstamp', ical().Time.fromJSDate(now, true));
    event.addPropertyWithValue('summary', row.title);
    if (row.rrule) {
      addZoned(event, 'dtstart', new Date(row.starts_at), row.timezone);
      addZoned(event, 'dtend', new Date(row.ends_at), row.timezone);
      event.addPropertyWithValue('rrule', ical().Recur.fromString(row.rrule));
    } else {
      event.addPropertyWithValue('dtstart', ical().Time.fromJSDate(new Date(row.starts_at), true));
      event.addPropertyWithValue('dtend', ical().Time.fromJSDate(new Date(row.ends_at), true));
    }
    if (row.description) event.addPropertyWithValue('description', row.description);
    if (row.location) event.addPropertyWithValue('location', row.location);
    const attendees =
      typeof row.attendees === 'string' ? (JSON.parse(row.attendees) as string[]) : row.attendees;
    for (const attendee of attendees) event.addPropertyWithValue('attendee', `mailto:${attendee}`);
    event.addPropertyWithValue('sequence', row.sequence);
    event.addPropertyWithValue('status', row.status === 'cancelled' ? 'CANCELLED' : 'CONFIRMED');
    event.addPropertyWithValue('last-modified', ical().Time.fromJSDate(new Date(row.updated_at), true));
    calendar.addSubcomponent(event);
  }
  return calendar.toString().replace(/\r?\n/g, '\r\n');
}

function addZoned(
  event: InstanceType<typeof ICAL.Component>,
  name: string,
  instant: Date,
  timezone: string,
): void {
  const wall = wallClock(instant, timezone);
  const time = ical().Time.fromData({
    year: wall.year,
    month: wall.month,
    day: wall.day,
    hour: wall.hour,
    minute: wall.minute,
    second: 0,
    isDate: false,
  });
  const property = event.addPropertyWithValue(name, time);
  property.setParameter('tzid', timezone);
}
