import { describe, expect, it } from 'vitest';
import { formatInZone } from '../../time/index.ts';
import { type CronSchedule, fireTimesBetween, nextFireTime, parseCron } from './cron-schedule.ts';

function cron(text: string): CronSchedule {
  const parsed = parseCron(text);
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.cron;
}

const iso = (date: Date | null) => date?.toISOString() ?? null;

describe('parseCron', () => {
  it('names the problem of a bad expression', () => {
    expect(parseCron('* * * *')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('has 4 fields, not 5'),
    });
    expect(parseCron('0 9 * * * *')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('6 fields'),
    });
    expect(parseCron('60 9 * * *')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('minute 60 is out of range (0-59)'),
    });
    expect(parseCron('0 24 * * *')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('hour 24 is out of range (0-23)'),
    });
    expect(parseCron('0 9 0 * *')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('day of month 0'),
    });
    expect(parseCron('0 9 * 13 *')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('month 13'),
    });
    expect(parseCron('0 9 * * 8')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('day of week 8'),
    });
    expect(parseCron('*/0 * * * *')).toMatchObject({ ok: false, problem: expect.stringContaining('step') });
    expect(parseCron('0 17-9 * * *')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('backwards'),
    });
    expect(parseCron('')).toMatchObject({ ok: false, problem: expect.stringContaining('0 fields') });
  });

  it('reads lists, ranges, steps, names and macros', () => {
    const weekdays = fireTimesBetween(
      cron('*/15 9-17 * jan-mar mon-fri'),
      'UTC',
      new Date('2026-12-31T00:00:00Z'),
      new Date('2027-01-04T09:30:00Z'),
    );
    // Friday 1 January from 09:00 to 17:45, then Monday 4 January.
    expect(weekdays.map(iso).slice(0, 2)).toEqual(['2027-01-01T09:00:00.000Z', '2027-01-01T09:15:00.000Z']);
    expect(iso(weekdays[35] ?? null)).toBe('2027-01-01T17:45:00.000Z');
    expect(weekdays.map(iso).slice(36)).toEqual([
      '2027-01-04T09:00:00.000Z',
      '2027-01-04T09:15:00.000Z',
      '2027-01-04T09:30:00.000Z',
    ]);
    expect(iso(nextFireTime(cron('0 0 * * 7'), 'UTC', new Date('2026-11-27T00:00:00Z')))).toBe(
      '2026-11-29T00:00:00.000Z',
    );
    expect(cron('@daily').expression).toBe('@daily');
    expect(iso(nextFireTime(cron('@hourly'), 'UTC', new Date('2026-01-01T10:20:00Z')))).toBe(
      '2026-01-01T11:00:00.000Z',
    );
  });
});

describe('nextFireTime', () => {
  it('fires every minute on the minute', () => {
    const times = fireTimesBetween(
      cron('* * * * *'),
      'UTC',
      new Date('2026-01-01T10:00:30Z'),
      new Date('2026-01-01T10:03:00Z'),
    );
    expect(times.map(iso)).toEqual([
      '2026-01-01T10:01:00.000Z',
      '2026-01-01T10:02:00.000Z',
      '2026-01-01T10:03:00.000Z',
    ]);
  });

  it('fires at 09:00 Europe/Berlin on both sides of the spring change', () => {
    const times = fireTimesBetween(
      cron('0 9 * * *'),
      'Europe/Berlin',
      new Date('2026-03-27T12:00:00Z'),
      new Date('2026-03-31T12:00:00Z'),
    );
    expect(times.map(iso)).toEqual([
      '2026-03-28T08:00:00.000Z', // CET, +01:00
      '2026-03-29T07:00:00.000Z', // CEST, +02:00 (the change is at 02:00 that night)
      '2026-03-30T07:00:00.000Z',
      '2026-03-31T07:00:00.000Z',
    ]);
    expect(times.map((time) => formatInZone(time, 'Europe/Berlin'))).toEqual([
      '2026-03-28T09:00:00+01:00',
      '2026-03-29T09:00:00+02:00',
      '2026-03-30T09:00:00+02:00',
      '2026-03-31T09:00:00+02:00',
    ]);
  });

  it('fires at 09:00 Europe/Berlin on both sides of the autumn change', () => {
    const times = fireTimesBetween(
      cron('0 9 * * *'),
      'Europe/Berlin',
      new Date('2026-10-24T12:00:00Z'),
      new Date('2026-10-26T12:00:00Z'),
    );
    expect(times.map(iso)).toEqual(['2026-10-25T08:00:00.000Z', '2026-10-26T08:00:00.000Z']);
  });

  it('fires a wall-clock time of the repeated hour once, and one in the skipped hour after the gap', () => {
    const autumn = fireTimesBetween(
      cron('30 2 * * *'),
      'Europe/Berlin',
      new Date('2026-10-24T12:00:00Z'),
      new Date('2026-10-26T12:00:00Z'),
    );
    expect(autumn.map(iso)).toEqual(['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z']);
    const spring = fireTimesBetween(
      cron('30 2 * * *'),
      'Europe/Berlin',
      new Date('2026-03-28T12:00:00Z'),
      new Date('2026-03-30T12:00:00Z'),
    );
    expect(spring.map((time) => formatInZone(time, 'Europe/Berlin'))).toEqual([
      '2026-03-29T03:00:00+02:00',
      '2026-03-30T02:30:00+02:00',
    ]);
  });

  it('reads days in the zone, and either day field when both are set', () => {
    // Monday 00:30 in Tokyo is Sunday 15:30 UTC.
    expect(iso(nextFireTime(cron('30 0 * * mon'), 'Asia/Tokyo', new Date('2026-11-25T00:00:00Z')))).toBe(
      '2026-11-29T15:30:00.000Z',
    );
    const either = fireTimesBetween(
      cron('0 12 1 * fri'),
      'UTC',
      new Date('2026-05-01T00:00:00Z'),
      new Date('2026-05-16T00:00:00Z'),
    );
    expect(either.map(iso)).toEqual([
      '2026-05-01T12:00:00.000Z',
      '2026-05-08T12:00:00.000Z',
      '2026-05-15T12:00:00.000Z',
    ]);
    expect(nextFireTime(cron('0 0 30 2 *'), 'UTC', new Date('2026-01-01T00:00:00Z'))).toBeNull();
  });

  it('handles half-hour zones', () => {
    expect(
      formatInZone(
        nextFireTime(cron('0 9 * * *'), 'Asia/Kolkata', new Date('2026-01-01T00:00:00Z'))!,
        'Asia/Kolkata',
      ),
    ).toBe('2026-01-01T09:00:00+05:30');
  });
});
