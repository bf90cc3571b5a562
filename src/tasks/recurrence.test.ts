import { describe, expect, it } from 'vitest';
import { advance, nextOccurrence, parseRecurrence } from './recurrence.ts';

describe('parseRecurrence', () => {
  it('accepts the named rules and every N days|weeks|months, normalised', () => {
    expect(parseRecurrence('Weekly')).toEqual({ ok: true, rule: 'weekly' });
    expect(parseRecurrence('weekdays')).toEqual({ ok: true, rule: 'weekdays' });
    expect(parseRecurrence('every  2 Weeks')).toEqual({ ok: true, rule: 'every 2 weeks' });
    expect(parseRecurrence('every 1 months')).toEqual({ ok: true, rule: 'every 1 month' });
    expect(parseRecurrence('every 3 day')).toEqual({ ok: true, rule: 'every 3 days' });
  });

  it('rejects anything else with the accepted forms', () => {
    for (const input of ['fortnightly', 'every 0 days', 'every 2 years', 'every week', 'RRULE:FREQ=DAILY']) {
      const result = parseRecurrence(input);
      expect(result.ok).toBe(false);
      if (!result.ok)
        expect(result.error).toContain('daily, weekdays, weekly, monthly, yearly, every N days');
    }
  });
});

describe('advance', () => {
  it('steps each rule once', () => {
    expect(advance('daily', '2026-02-28')).toBe('2026-03-01');
    expect(advance('weekly', '2026-12-28')).toBe('2027-01-04');
    expect(advance('monthly', '2026-01-31')).toBe('2026-02-28');
    expect(advance('yearly', '2028-02-29')).toBe('2029-02-28');
    expect(advance('every 2 weeks', '2026-03-10')).toBe('2026-03-24');
    expect(advance('every 3 months', '2026-11-30')).toBe('2027-02-28');
    // Friday → Monday; Saturday → Monday.
    expect(advance('weekdays', '2026-03-13')).toBe('2026-03-16');
    expect(advance('weekdays', '2026-03-14')).toBe('2026-03-16');
    expect(advance('weekdays', '2026-03-10')).toBe('2026-03-11');
  });
});

describe('nextOccurrence', () => {
  it('advances from the due date when that lands after today', () => {
    expect(nextOccurrence('weekly', '2026-03-12', '2026-03-10')).toBe('2026-03-19');
  });

  it('skips occurrences that would already be overdue when a task is finished late', () => {
    expect(nextOccurrence('weekly', '2026-03-02', '2026-03-10')).toBe('2026-03-16');
    expect(nextOccurrence('daily', '2026-03-01', '2026-03-10')).toBe('2026-03-11');
    // Monthly keeps its day of month instead of drifting after a short month.
    expect(nextOccurrence('monthly', '2026-01-31', '2026-03-05')).toBe('2026-03-31');
    expect(nextOccurrence('weekdays', '2026-03-02', '2026-03-13')).toBe('2026-03-16');
  });

  it('counts from today when the task had no due date', () => {
    expect(nextOccurrence('every 3 days', null, '2026-03-10')).toBe('2026-03-13');
  });
});
