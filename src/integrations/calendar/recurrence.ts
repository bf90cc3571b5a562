import { wallClock, zonedToInstant } from '../../time/index.ts';
import type { TimeRange } from './calendar-types.ts';
import { ical } from './ical.ts';

const FREQ = /(^|;)FREQ=(SECONDLY|MINUTELY|HOURLY|DAILY|WEEKLY|MONTHLY|YEARLY)(;|$)/;
const PART =
  /^(FREQ|UNTIL|COUNT|INTERVAL|BYSECOND|BYMINUTE|BYHOUR|BYDAY|BYMONTHDAY|BYYEARDAY|BYWEEKNO|BYMONTH|BYSETPOS|WKST)=[A-Z0-9,+\-T:]+$/;
const MAX_OCCURRENCES = 2_000;

/** The RRULE without its `RRULE:` prefix, upper-cased; or an error saying how to write one. */
export function normalizeRrule(input: string): { ok: true; rrule: string } | { ok: false; error: string } {
  const rrule = input
    .trim()
    .replace(/^RRULE:/i, '')
    .toUpperCase();
  const parts = rrule.split(';').filter(Boolean);
  if (!FREQ.test(rrule) || !parts.every((part) => PART.test(part))) {
    return {
      ok: false,
      error: `"${input}" is not an RRULE: write e.g. FREQ=WEEKLY;BYDAY=MO,WE;COUNT=10 or FREQ=DAILY;UNTIL=20261231T000000Z`,
    };
  }
  try {
    ical().Recur.fromString(rrule);
  } catch (error) {
    return { ok: false, error: `"${input}" is not a valid RRULE (${(error as Error).message})` };
  }
  return { ok: true, rrule: parts.join(';') };
}

/**
 * Start instants of a series' occurrences that overlap `range`. The rule repeats the
 * wall-clock time in `timezone`, so a 09:00 meeting stays at 09:00 across DST changes.
 */
export function occurrences(
  series: { start: Date; durationMs: number; rrule: string; timezone: string },
  range: TimeRange,
): Date[] {
  const wall = wallClock(series.start, series.timezone);
  const dtstart = ical().Time.fromData({
    year: wall.year,
    month: wall.month,
    day: wall.day,
    hour: wall.hour,
    minute: wall.minute,
    second: 0,
    isDate: false,
  });
  const iterator = ical().Recur.fromString(series.rrule).iterator(dtstart);
  const starts: Date[] = [];
  for (let index = 0; index < MAX_OCCURRENCES; index++) {
    const next = iterator.next();
    if (!next) break;
    const start = zonedToInstant(
      { year: next.year, month: next.month, day: next.day, hour: next.hour, minute: next.minute },
      series.timezone,
    );
    if (start.getTime() >= range.to.getTime()) break;
    if (start.getTime() + series.durationMs > range.from.getTime()) starts.push(start);
  }
  return starts;
}
