import ICAL from 'ical.js';
import { describe, expect, it } from 'vitest';
import { zonedToInstant } from '../../time/index.ts';
import { vtimezone } from './vtimezone.ts';

const ZONES = [
  'Europe/Paris',
  'America/New_York',
  'Australia/Sydney', // summer time across the new year
  'Pacific/Chatham', // +12:45 / +13:45
  'Asia/Kolkata', // no daylight time, half-hour offset
  'America/Sao_Paulo', // dropped daylight time in 2019
  'Asia/Tehran', // fixed dates, not weekday rules; dropped in 2022
  'Africa/Casablanca', // moves around Ramadan
  'UTC',
];

/** The zone as an iCalendar client reads it: the VTIMEZONE serialized, parsed back by ical.js. */
function parsedZone(timezone: string, window: { from: Date; to: Date }) {
  const calendar = new ICAL.Component(['vcalendar', [], []]);
  calendar.addSubcomponent(vtimezone(timezone, window));
  const parsed = new ICAL.Component(ICAL.parse(calendar.toString()));
  const component = parsed.getFirstSubcomponent('vtimezone')!;
  expect(component.getFirstPropertyValue('tzid')).toBe(timezone);
  return { component, zone: new ICAL.Timezone({ component, tzid: timezone }) };
}

describe('vtimezone', () => {
  it.each(ZONES)(
    '%s: gives the offset Intl gives at noon of every day, also years past its window',
    (timezone) => {
      const { zone } = parsedZone(timezone, { from: new Date('2015-01-01Z'), to: new Date('2036-01-01Z') });
      const wrong: string[] = [];
      for (let time = Date.UTC(2015, 1, 1); time < Date.UTC(2046, 0, 1); time += 86_400_000) {
        const day = new Date(time);
        const local = {
          year: day.getUTCFullYear(),
          month: day.getUTCMonth() + 1,
          day: day.getUTCDate(),
          hour: 12,
          minute: 0,
        };
        const expected = zonedToInstant(local, timezone).getTime() / 1000;
        const actual = ICAL.Time.fromData({ ...local, second: 0 }, zone).toUnixTime();
        if (actual !== expected)
          wrong.push(`${day.toISOString().slice(0, 10)}: ${(actual - expected) / 60} min`);
      }
      expect(wrong.slice(0, 5)).toEqual([]);
    },
  );

  it('writes a yearly rule for a zone that keeps one, with STANDARD and DAYLIGHT observances', () => {
    const { component } = parsedZone('Europe/Paris', {
      from: new Date('2020-01-01Z'),
      to: new Date('2030-01-01Z'),
    });
    const daylight = component.getAllSubcomponents('daylight');
    const [opening, ...standard] = component.getAllSubcomponents('standard');
    // The offset when the window opens (winter, +01:00), then the two rules.
    expect(opening!.getFirstPropertyValue('dtstart')!.toString()).toBe('2020-01-01T01:00:00');
    expect(opening!.getFirstPropertyValue('tzoffsetto')!.toString()).toBe('+01:00');
    expect(daylight).toHaveLength(1);
    expect(standard).toHaveLength(1);
    expect(String(daylight[0]!.getFirstPropertyValue('rrule'))).toBe('FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU');
    expect(daylight[0]!.getFirstPropertyValue('tzoffsetfrom')!.toString()).toBe('+01:00');
    expect(daylight[0]!.getFirstPropertyValue('tzoffsetto')!.toString()).toBe('+02:00');
    expect(daylight[0]!.getFirstPropertyValue('dtstart')!.toString()).toBe('2020-03-29T02:00:00');
    expect(String(standard[0]!.getFirstPropertyValue('rrule'))).toBe('FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU');
  });
});
