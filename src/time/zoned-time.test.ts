import { describe, expect, it } from 'vitest';
import {
  formatInZone,
  isTimeZone,
  localDay,
  localMinute,
  parseDateTime,
  wallClock,
  zonedToInstant,
  zoneOffsetMinutes,
} from './zoned-time.ts';

describe('zoned time', () => {
  it('knows IANA zones and refuses made-up ones', () => {
    expect(isTimeZone('Europe/Berlin')).toBe(true);
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('Nowhere/Special')).toBe(false);
  });

  it('reads the wall clock and the offset on both sides of a daylight-saving change', () => {
    const beforeSpring = new Date('2026-03-29T00:30:00Z');
    const afterSpring = new Date('2026-03-29T01:30:00Z');
    expect(zoneOffsetMinutes(beforeSpring, 'Europe/Berlin')).toBe(60);
    expect(zoneOffsetMinutes(afterSpring, 'Europe/Berlin')).toBe(120);
    expect(wallClock(afterSpring, 'Europe/Berlin')).toMatchObject({ hour: 3, minute: 30, weekday: 'Sun' });
    expect(formatInZone(afterSpring, 'Europe/Berlin')).toBe('2026-03-29T03:30:00+02:00');
    expect(formatInZone(new Date('2026-01-05T12:00:00Z'), 'America/St_Johns')).toBe(
      '2026-01-05T08:30:00-03:30',
    );
  });

  it('turns a local time into the instant, also across midnight and the date line', () => {
    const local = { year: 2026, month: 10, day: 25, hour: 9, minute: 0, second: 15 };
    expect(zonedToInstant(local, 'Europe/Berlin').toISOString()).toBe('2026-10-25T08:00:15.000Z');
    expect(localDay(new Date('2026-12-31T15:00:00Z'), 'Asia/Tokyo')).toBe('2027-01-01');
    expect(parseDateTime('2026-07-01T18:00', 'America/New_York')).toEqual({
      ok: true,
      instant: new Date('2026-07-01T22:00:00Z'),
      dateOnly: false,
    });
  });

  it('shows a minute in the zone, in UTC when the zone is unknown', () => {
    const instant = new Date('2026-03-01T13:05:00Z');
    expect(localMinute(instant, 'Europe/Berlin')).toBe('2026-03-01 14:05');
    expect(localMinute(instant, 'Nowhere/Special')).toBe('2026-03-01 13:05');
  });
});
