import ICAL from 'ical.js';
import { describe, expect, it } from 'vitest';
import { calendarProviderContract } from '../../../test/support/contracts/calendar-contract.ts';
import { describeEachBackend } from '../../../test/support/db.ts';
import { ensureUser } from '../../users/index.ts';
import { calendarFeedRoutes } from './feed-routes.ts';
import { calendarFeedToken } from './ics-feed.ts';
import { LocalCalendar } from './local-calendar.ts';

describeEachBackend('local calendar', (getDb) => {
  let users = 0;
  describe('contract', () => {
    calendarProviderContract(async () => {
      const user = await ensureUser(getDb(), `cal-${++users}`, { timezone: 'UTC' });
      return new LocalCalendar(getDb(), user.id);
    });
  });

  it('keeps each user to their own events', async () => {
    await ensureUser(getDb(), 'owner-a');
    await ensureUser(getDb(), 'owner-b');
    const a = new LocalCalendar(getDb(), 'owner-a');
    const event = await a.create({
      title: 'Private',
      start: new Date('2026-05-01T10:00Z'),
      end: new Date('2026-05-01T11:00Z'),
      timezone: 'UTC',
    });
    const b = new LocalCalendar(getDb(), 'owner-b');
    expect(await b.get(event.id)).toBeNull();
    expect(await b.delete(event.id)).toBe(false);
    expect(await b.list({ from: new Date('2026-05-01Z'), to: new Date('2026-05-02Z') })).toEqual([]);
  });

  it('serves the feed as text/calendar at the secret token, 404 otherwise, and rotation revokes the old URL', async () => {
    await ensureUser(getDb(), 'feed-user');
    const calendar = new LocalCalendar(getDb(), 'feed-user');
    await calendar.create({
      title: 'Dentist',
      start: new Date('2026-06-01T14:30Z'),
      end: new Date('2026-06-01T15:00Z'),
      timezone: 'UTC',
      description: 'Bring card',
    });
    await calendar.create({
      title: 'Gym',
      start: new Date('2026-06-02T06:00Z'),
      end: new Date('2026-06-02T07:00Z'),
      timezone: 'Europe/Paris',
      recurrence: 'FREQ=WEEKLY',
    });
    const app = calendarFeedRoutes(getDb());
    const token = await calendarFeedToken(getDb(), 'feed-user');
    expect(await calendarFeedToken(getDb(), 'feed-user')).toBe(token);
    const response = await app.request(`/ical/${token}.ics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/calendar');
    const body = await response.text();
    expect(body).toContain('BEGIN:VCALENDAR');
    expect(body).toContain('SUMMARY:Dentist');
    expect(body).toContain('DTSTART:20260601T143000Z');
    expect(body).toContain('DTSTART;TZID=Europe/Paris:20260602T080000');
    expect(body).toContain('RRULE:FREQ=WEEKLY');
    // RFC 5545: the TZID used has its VTIMEZONE, and a parser puts the event at the stored instant.
    const parsed = new ICAL.Component(ICAL.parse(body));
    const zones = parsed.getAllSubcomponents('vtimezone');
    expect(zones.map((zone) => zone.getFirstPropertyValue('tzid'))).toEqual(['Europe/Paris']);
    const paris = new ICAL.Timezone({ component: zones[0]!, tzid: 'Europe/Paris' });
    /** The instant a wall-clock time of the feed is, read with the feed's own VTIMEZONE. */
    const instant = (time: InstanceType<typeof ICAL.Time>) =>
      new Date(
        ICAL.Time.fromData(
          {
            year: time.year,
            month: time.month,
            day: time.day,
            hour: time.hour,
            minute: time.minute,
            second: 0,
          },
          paris,
        ).toUnixTime() * 1000,
      ).toISOString();
    const gym = parsed
      .getAllSubcomponents('vevent')
      .find((event) => event.getFirstPropertyValue('summary') === 'Gym')!;
    expect(instant(gym.getFirstPropertyValue('dtstart') as InstanceType<typeof ICAL.Time>)).toBe(
      '2026-06-02T06:00:00.000Z',
    );
    const series = new ICAL.Event(gym).iterator();
    let occurrence = series.next();
    for (let week = 0; week < 30; week++) occurrence = series.next();
    // Thirty weeks on it is winter: still 08:00 in Paris, now 07:00 UTC.
    expect(instant(occurrence!)).toBe('2026-12-29T07:00:00.000Z');
    expect((await app.request('/ical/not-the-token-at-all.ics')).status).toBe(404);
    const rotated = await calendarFeedToken(getDb(), 'feed-user', { rotate: true });
    expect(rotated).not.toBe(token);
    expect((await app.request(`/ical/${token}.ics`)).status).toBe(404);
    expect((await app.request(`/ical/${rotated}.ics`)).status).toBe(200);
  });
});
