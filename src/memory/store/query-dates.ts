import { wallClock } from '../../time/index.ts';
/** A span of calendar days, both ends included, as `YYYY-MM-DD`. */
export type DayRange = { from: string; to: string };

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MONTH =
  '(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\\.?';
const ORDINAL = '(?:st|nd|rd|th)?';

/** How far "before X" and "after X" reach: the week before or after. */
const NEAR_DAYS = 7;

type Day = { year: number; month: number; day: number };

const monthIndex = (name: string) => MONTHS.indexOf(name.slice(0, 3).toLowerCase()) + 1;

function validDay(year: number, month: number, day: number): Day | null {
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) {
    return null;
  }
  return { year, month, day };
}

const iso = (day: Day) =>
  `${String(day.year).padStart(4, '0')}-${String(day.month).padStart(2, '0')}-${String(day.day).padStart(2, '0')}`;

function shift(day: Day, days: number): Day {
  const date = new Date(Date.UTC(day.year, day.month - 1, day.day + days));
  return { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() };
}

function monthRange(year: number, month: number): DayRange {
  const last = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return { from: iso({ year, month, day: 1 }), to: iso({ year, month, day: last }) };
}

/** `today` in `timeZone` as a calendar day. */
function today(now: Date, timeZone: string): Day {
  const { year, month, day } = wallClock(now, timeZone);
  return { year, month, day };
}

/** A named day with what precedes it: "the week before 8 May, 2023" reaches back a week. */
function aroundDay(day: Day, before: string): DayRange {
  if (/\bbefore\s*$/i.test(before)) return { from: iso(shift(day, -NEAR_DAYS)), to: iso(day) };
  if (/\bafter\s*$/i.test(before)) return { from: iso(day), to: iso(shift(day, NEAR_DAYS)) };
  return { from: iso(day), to: iso(day) };
}

/**
 * The days a query asks about, when it names them: a date (`8 May, 2023`, `May 8th 2023`,
 * `2023-05-08`, with "before"/"after" reaching a week that way), a month (`May 2023`), a year
 * (`in 2022`), or a time relative to `now` in `timeZone` (`today`, `yesterday`, `last week`,
 * `this month`, `last year`, `3 days ago`, `two weeks ago`). Null when it names none. A month
 * without a year names no days: which May is meant is a guess.
 */
export function queryDayRange(query: string, now: Date, timeZone = 'UTC'): DayRange | null {
  const text = query.replace(/\s+/g, ' ');
  const dated: Array<{ pattern: RegExp; day: (m: RegExpExecArray) => Day | null }> = [
    {
      pattern: /\b(\d{4})-(\d{2})-(\d{2})\b/,
      day: (m) => validDay(Number(m[1]), Number(m[2]), Number(m[3])),
    },
    {
      pattern: new RegExp(`\\b(\\d{1,2})${ORDINAL}(?: of)? ${MONTH},? ?(\\d{4})\\b`, 'i'),
      day: (m) => validDay(Number(m[3]), monthIndex(m[2]!), Number(m[1])),
    },
    {
      pattern: new RegExp(`\\b${MONTH} (\\d{1,2})${ORDINAL},? ?(\\d{4})\\b`, 'i'),
      day: (m) => validDay(Number(m[3]), monthIndex(m[1]!), Number(m[2])),
    },
  ];
  for (const { pattern, day } of dated) {
    const match = pattern.exec(text);
    const found = match ? day(match) : null;
    if (match && found) return aroundDay(found, text.slice(0, match.index));
  }
  const month = new RegExp(`\\b${MONTH},? (?:of )?(\\d{4})\\b`, 'i').exec(text);
  if (month) return monthRange(Number(month[2]), monthIndex(month[1]!));
  const year = /\b(?:in|during|of|since|from|throughout) (\d{4})\b/i.exec(text);
  if (year) return { from: `${year[1]}-01-01`, to: `${year[1]}-12-31` };
  return /\b(today|yesterday|ago|last|this)\b/i.test(text) ? relativeRange(text, today(now, timeZone)) : null;
}

const COUNTS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
};

function relativeRange(text: string, now: Day): DayRange | null {
  const lower = text.toLowerCase();
  if (/\btoday\b/.test(lower)) return { from: iso(now), to: iso(now) };
  if (/\byesterday\b/.test(lower)) {
    const day = shift(now, -1);
    return { from: iso(day), to: iso(day) };
  }
  const ago =
    /\b(\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten) (day|week|month|year)s? ago\b/.exec(
      lower,
    );
  if (ago) {
    const count = COUNTS[ago[1]!] ?? Number(ago[1]);
    const days = { day: 1, week: 7, month: 30, year: 365 }[ago[2] as 'day' | 'week' | 'month' | 'year'];
    const center = shift(now, -count * days);
    // "Three weeks ago" is a week wide, "two days ago" a day either side.
    const half = Math.max(1, Math.round(days / 2));
    return { from: iso(shift(center, -half)), to: iso(shift(center, half)) };
  }
  // Monday-based weeks, as ISO 8601 counts them.
  const weekday = (new Date(Date.UTC(now.year, now.month - 1, now.day)).getUTCDay() + 6) % 7;
  const weekStart = shift(now, -weekday);
  if (/\blast weekend\b/.test(lower)) {
    const saturday = shift(weekStart, -2);
    return { from: iso(saturday), to: iso(shift(saturday, 1)) };
  }
  if (/\blast week\b/.test(lower)) return { from: iso(shift(weekStart, -7)), to: iso(shift(weekStart, -1)) };
  if (/\bthis week\b/.test(lower)) return { from: iso(weekStart), to: iso(now) };
  if (/\blast month\b/.test(lower)) {
    const month = now.month === 1 ? 12 : now.month - 1;
    return monthRange(now.month === 1 ? now.year - 1 : now.year, month);
  }
  if (/\bthis month\b/.test(lower)) return { from: iso({ ...now, day: 1 }), to: iso(now) };
  if (/\blast year\b/.test(lower)) return { from: `${now.year - 1}-01-01`, to: `${now.year - 1}-12-31` };
  if (/\bthis year\b/.test(lower)) return { from: `${now.year}-01-01`, to: iso(now) };
  return null;
}
