import { isTimeZone, localDay } from '../time/index.ts';
/**
 * Calendar dates as `YYYY-MM-DD` strings, read in the user's IANA time zone. No date library:
 * a date is a day count in UTC arithmetic, and "today" comes from Intl.DateTimeFormat.
 */

export type DateInputResult = { ok: true; date: string } | { ok: false; error: string };

export const DATE_INPUT_FORMS =
  'YYYY-MM-DD, today, tomorrow, yesterday, a weekday (friday, next monday), in N days, in N weeks';

const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const;
const WEEKDAY_ABBREVIATIONS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const RELATIVE = /^in (\d{1,4}) (day|days|week|weeks)$/;
const DAY_MS = 86_400_000;

/**
 * Reads a date the way a person writes one, relative to `now` in `timezone`. A bare weekday is
 * the next such day on or after today; `next <weekday>` is strictly after today.
 */
export function parseDateInput(input: string, timezone: string, now: Date): DateInputResult {
  const text = input.trim().toLowerCase().replace(/\s+/g, ' ');
  const iso = ISO_DATE.exec(text);
  if (iso) {
    return isRealDate(text)
      ? { ok: true, date: text }
      : { ok: false, error: `${input.trim()} is not a real calendar date. Use ${DATE_INPUT_FORMS}.` };
  }
  const today = localDate(timezone, now);
  if (today === null) return { ok: false, error: `Unknown time zone "${timezone}".` };
  if (text === 'today') return { ok: true, date: today };
  if (text === 'tomorrow') return { ok: true, date: addDays(today, 1) };
  if (text === 'yesterday') return { ok: true, date: addDays(today, -1) };
  const relative = RELATIVE.exec(text);
  if (relative) {
    const count = Number(relative[1]);
    const unit = relative[2]?.startsWith('week') ? 7 : 1;
    return { ok: true, date: addDays(today, count * unit) };
  }
  const strictlyAfter = text.startsWith('next ');
  const weekday = weekdayIndex(strictlyAfter ? text.slice(5) : text);
  if (weekday !== null) {
    let offset = (weekday - dayOfWeek(today) + 7) % 7;
    if (strictlyAfter && offset === 0) offset = 7;
    return { ok: true, date: addDays(today, offset) };
  }
  return { ok: false, error: `Cannot read "${input.trim()}" as a date. Use ${DATE_INPUT_FORMS}.` };
}

/** Why `input` can never be a date (whatever the day or zone), or null when its form is fine. */
export function dateInputError(input: string): string | null {
  const result = parseDateInput(input, 'UTC', new Date(0));
  return result.ok ? null : result.error;
}

/** The calendar date at `now` in `timezone`, or null for an unknown zone. */
export function localDate(timezone: string, now: Date): string | null {
  return isTimeZone(timezone) ? localDay(now, timezone) : null;
}

export function isRealDate(date: string): boolean {
  const match = ISO_DATE.exec(date);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const utc = new Date(Date.UTC(year, month - 1, day));
  return utc.getUTCFullYear() === year && utc.getUTCMonth() === month - 1 && utc.getUTCDate() === day;
}

export function addDays(date: string, days: number): string {
  return format(toUtcMs(date) + days * DAY_MS);
}

/** Adds calendar months, clamping to the month's last day (Jan 31 + 1 month = Feb 28/29). */
export function addMonths(date: string, months: number): string {
  const { year, month, day } = split(date);
  const index = year * 12 + (month - 1) + months;
  const targetYear = Math.floor(index / 12);
  const targetMonth = index - targetYear * 12;
  const lastDay = new Date(Date.UTC(targetYear, targetMonth + 1, 0)).getUTCDate();
  return format(Date.UTC(targetYear, targetMonth, Math.min(day, lastDay)));
}

/** 0 = Sunday … 6 = Saturday. */
export function dayOfWeek(date: string): number {
  return new Date(toUtcMs(date)).getUTCDay();
}

function weekdayIndex(name: string): number | null {
  const full = WEEKDAYS.indexOf(name as (typeof WEEKDAYS)[number]);
  if (full >= 0) return full;
  const short = WEEKDAY_ABBREVIATIONS.indexOf(name as (typeof WEEKDAY_ABBREVIATIONS)[number]);
  return short >= 0 ? short : null;
}

function split(date: string): { year: number; month: number; day: number } {
  const [year = 0, month = 1, day = 1] = date.split('-').map(Number);
  return { year, month, day };
}

function toUtcMs(date: string): number {
  const { year, month, day } = split(date);
  return Date.UTC(year, month - 1, day);
}

function format(utcMs: number): string {
  return new Date(utcMs).toISOString().slice(0, 10);
}
