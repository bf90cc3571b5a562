import { describe, expect, it } from 'vitest';
import { addMonths, dateInputError, localDate, parseDateInput } from './dates.ts';

// Tuesday 2026-03-10, 23:30 UTC: already Wednesday 2026-03-11 in Berlin, still Tuesday in New York.
const lateTuesdayUtc = new Date('2026-03-10T23:30:00Z');

const date = (input: string, timezone = 'UTC', now = lateTuesdayUtc) => {
  const result = parseDateInput(input, timezone, now);
  if (!result.ok) throw new Error(result.error);
  return result.date;
};

describe('parseDateInput', () => {
  it('accepts real ISO dates as they are', () => {
    expect(date('2026-02-28')).toBe('2026-02-28');
    expect(date(' 2028-02-29 ')).toBe('2028-02-29');
  });

  it('rejects impossible ISO dates, naming the value and the accepted forms', () => {
    for (const input of ['2026-02-30', '2026-13-01', '2027-02-29', '2026-04-31', '2026-00-10']) {
      const result = parseDateInput(input, 'UTC', lateTuesdayUtc);
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(result.error).toContain(input);
        expect(result.error).toContain('YYYY-MM-DD');
        expect(result.error).toContain('tomorrow');
      }
    }
  });

  it('rejects words it does not know', () => {
    const result = parseDateInput('someday', 'UTC', lateTuesdayUtc);
    expect(result).toEqual({ ok: false, error: expect.stringContaining('"someday"') });
    expect(parseDateInput('in 3 fortnights', 'UTC', lateTuesdayUtc).ok).toBe(false);
    expect(parseDateInput('03/10/2026', 'UTC', lateTuesdayUtc).ok).toBe(false);
  });

  it('reads today, tomorrow and yesterday in the user time zone, not in UTC', () => {
    expect(date('today', 'UTC')).toBe('2026-03-10');
    expect(date('today', 'Europe/Berlin')).toBe('2026-03-11');
    expect(date('Tomorrow', 'Europe/Berlin')).toBe('2026-03-12');
    expect(date('yesterday', 'Europe/Berlin')).toBe('2026-03-10');
    expect(date('today', 'America/New_York')).toBe('2026-03-10');
    expect(date('today', 'Pacific/Kiritimati')).toBe('2026-03-11');
  });

  it('reads a bare weekday as the next such day on or after today', () => {
    // UTC today is Tuesday 2026-03-10.
    expect(date('tuesday', 'UTC')).toBe('2026-03-10');
    expect(date('friday', 'UTC')).toBe('2026-03-13');
    expect(date('monday', 'UTC')).toBe('2026-03-16');
    // Berlin today is Wednesday 2026-03-11, so "tuesday" is a week out there.
    expect(date('tuesday', 'Europe/Berlin')).toBe('2026-03-17');
    expect(date('wed', 'Europe/Berlin')).toBe('2026-03-11');
  });

  it('reads "next <weekday>" as strictly after today', () => {
    expect(date('next tuesday', 'UTC')).toBe('2026-03-17');
    expect(date('next  Wednesday', 'UTC')).toBe('2026-03-11');
    expect(date('next wednesday', 'Europe/Berlin')).toBe('2026-03-18');
  });

  it('reads "in N days|weeks" from the local today, across month ends', () => {
    expect(date('in 3 days', 'UTC')).toBe('2026-03-13');
    expect(date('in 1 day', 'Europe/Berlin')).toBe('2026-03-12');
    expect(date('in 2 weeks', 'UTC')).toBe('2026-03-24');
    expect(date('in 30 days', 'UTC')).toBe('2026-04-09');
  });

  it('reports an unknown time zone instead of throwing', () => {
    expect(parseDateInput('today', 'Mars/Olympus', lateTuesdayUtc)).toEqual({
      ok: false,
      error: expect.stringContaining('Mars/Olympus'),
    });
  });
});

describe('dateInputError', () => {
  it('accepts every form and rejects impossible dates, whatever the day', () => {
    expect(dateInputError('next friday')).toBeNull();
    expect(dateInputError('in 2 weeks')).toBeNull();
    expect(dateInputError('2026-02-30')).toContain('2026-02-30');
  });
});

describe('localDate and addMonths', () => {
  it('gives the calendar date in the zone', () => {
    expect(localDate('Europe/Berlin', lateTuesdayUtc)).toBe('2026-03-11');
    expect(localDate('Asia/Tokyo', new Date('2026-12-31T15:00:00Z'))).toBe('2027-01-01');
    expect(localDate('Nowhere/Special', lateTuesdayUtc)).toBeNull();
  });

  it('clamps to the end of shorter months', () => {
    expect(addMonths('2026-01-31', 1)).toBe('2026-02-28');
    expect(addMonths('2028-01-31', 1)).toBe('2028-02-29');
    expect(addMonths('2026-11-30', 3)).toBe('2027-02-28');
    expect(addMonths('2026-03-15', -3)).toBe('2025-12-15');
  });
});
