/**
 * Five-field cron expressions (`minute hour day-of-month month day-of-week`) evaluated in an
 * IANA time zone. Wall-clock semantics across daylight saving: a time that happens twice on a
 * fall-back day fires once (the first time); a time skipped on a spring-forward day fires at
 * the first minute after the gap.
 */
export type CronSchedule = {
  readonly expression: string;
  readonly minutes: ReadonlySet<number>;
  readonly hours: ReadonlySet<number>;
  readonly daysOfMonth: ReadonlySet<number>;
  readonly months: ReadonlySet<number>;
  /** 0 = Sunday … 6 = Saturday. */
  readonly daysOfWeek: ReadonlySet<number>;
  /** Vixie cron: when both day fields are restricted, a day matching either one fires. */
  readonly dayOr: boolean;
};

type FieldSpec = { name: string; min: number; max: number; names?: readonly string[] };

const FIELDS: readonly FieldSpec[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  {
    name: 'month',
    min: 1,
    max: 12,
    names: ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'],
  },
  { name: 'day of week', min: 0, max: 7, names: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] },
];

const MACROS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

const FORMAT_HINT = 'use 5 fields "minute hour day-of-month month day-of-week", e.g. "0 9 * * 1-5"';

/** Parses a cron expression, or says exactly what is wrong with it. Never throws. */
export function parseCron(text: string): { ok: true; cron: CronSchedule } | { ok: false; problem: string } {
  const expression = text.trim().replace(/\s+/g, ' ');
  const expanded = MACROS[expression.toLowerCase()] ?? expression;
  const parts = expanded === '' ? [] : expanded.split(' ');
  if (parts.length !== 5) {
    return {
      ok: false,
      problem: `cron "${expression}" has ${parts.length} field${parts.length === 1 ? '' : 's'}, not 5: ${FORMAT_HINT}`,
    };
  }
  const sets: Set<number>[] = [];
  for (const [index, part] of parts.entries()) {
    const spec = FIELDS[index]!;
    const parsed = parseField(part, spec);
    if (typeof parsed === 'string') return { ok: false, problem: `cron "${expression}": ${parsed}` };
    sets.push(parsed);
  }
  const daysOfWeek = new Set([...sets[4]!].map((day) => day % 7));
  return {
    ok: true,
    cron: Object.freeze({
      expression,
      minutes: sets[0]!,
      hours: sets[1]!,
      daysOfMonth: sets[2]!,
      months: sets[3]!,
      daysOfWeek,
      dayOr: !parts[2]!.startsWith('*') && !parts[4]!.startsWith('*'),
    }),
  };
}

function parseField(part: string, spec: FieldSpec): Set<number> | string {
  const values = new Set<number>();
  for (const item of part.split(',')) {
    const [range, stepText, extra] = item.split('/');
    if (extra !== undefined || range === undefined || range === '')
      return `the ${spec.name} field "${part}" is not valid`;
    let step = 1;
    if (stepText !== undefined) {
      if (!/^\d+$/.test(stepText) || Number(stepText) < 1)
        return `the step "/${stepText}" in the ${spec.name} field must be a whole number of at least 1`;
      step = Number(stepText);
    }
    let low: number;
    let high: number;
    if (range === '*') {
      low = spec.min;
      high = spec.max;
    } else {
      const bounds = range.split('-');
      if (bounds.length > 2) return `the ${spec.name} field "${part}" is not valid`;
      const first = fieldValue(bounds[0]!, spec);
      if (typeof first === 'string') return first;
      const last = bounds.length === 2 ? fieldValue(bounds[1]!, spec) : stepText ? spec.max : first;
      if (typeof last === 'string') return last;
      if (last < first) return `the ${spec.name} range "${range}" runs backwards`;
      low = first;
      high = last;
    }
    for (let value = low; value <= high; value += step) values.add(value);
  }
  return values;
}

function fieldValue(text: string, spec: FieldSpec): number | string {
  const named = spec.names?.indexOf(text.toLowerCase()) ?? -1;
  if (named >= 0) return named + (spec.min === 1 ? 1 : 0);
  if (!/^\d+$/.test(text)) return `"${text}" is not a valid ${spec.name}`;
  const value = Number(text);
  if (value < spec.min || value > spec.max)
    return `${spec.name} ${value} is out of range (${spec.min}-${spec.max})`;
  return value;
}

/** Wall-clock fields of an instant in a zone. `weekday`: 0 = Sunday. */
export type LocalTime = {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  weekday: number;
};

const formatters = new Map<string, Intl.DateTimeFormat>();
const WEEKDAYS: Record<string, number> = { Sun: 0, Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6 };

/** The wall clock in `zone` at `instant` (ms since the epoch). */
export function localTime(instant: number, zone: string): LocalTime {
  let format = formatters.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      weekday: 'short',
    });
    formatters.set(zone, format);
  }
  const fields: Record<string, string> = {};
  for (const part of format.formatToParts(instant)) fields[part.type] = part.value;
  return {
    year: Number(fields.year),
    month: Number(fields.month),
    day: Number(fields.day),
    hour: Number(fields.hour),
    minute: Number(fields.minute),
    second: Number(fields.second),
    weekday: WEEKDAYS[fields.weekday!] ?? 0,
  };
}

/** The zone's offset from UTC at `instant`, in minutes (Berlin in winter: 60). */
export function zoneOffsetMinutes(instant: number, zone: string): number {
  const local = localTime(instant, zone);
  const asUtc = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second);
  return Math.round((asUtc - Math.floor(instant / 1000) * 1000) / 60_000);
}

/** ISO 8601 with the zone's offset: `2026-03-30T09:00:00+02:00`. */
export function formatInZone(instant: Date | number, zone: string): string {
  const ms = typeof instant === 'number' ? instant : instant.getTime();
  const local = localTime(ms, zone);
  const offset = zoneOffsetMinutes(ms, zone);
  const pad = (value: number, width = 2) => String(value).padStart(width, '0');
  const sign = offset < 0 ? '-' : '+';
  const absolute = Math.abs(offset);
  return `${pad(local.year, 4)}-${pad(local.month)}-${pad(local.day)}T${pad(local.hour)}:${pad(local.minute)}:${pad(local.second)}${sign}${pad(Math.floor(absolute / 60))}:${pad(absolute % 60)}`;
}

function matchesDay(cron: CronSchedule, local: { month: number; day: number; weekday: number }): boolean {
  if (!cron.months.has(local.month)) return false;
  const dom = cron.daysOfMonth.has(local.day);
  const dow = cron.daysOfWeek.has(local.weekday);
  return cron.dayOr ? dom || dow : dom && dow;
}

const MINUTE = 60_000;
/** Searching further than this finds nothing (an impossible date such as 30 February). */
const HORIZON_MS = 5 * 366 * 24 * 60 * MINUTE;

/**
 * The first fire time strictly after `after`, or null when the expression never fires (30 2 30 2 *).
 * Skips through non-matching days and hours, so a daily schedule costs a few dozen steps.
 */
export function nextFireTime(cron: CronSchedule, zone: string, after: Date | number): Date | null {
  const start = typeof after === 'number' ? after : after.getTime();
  let t = Math.floor(start / MINUTE) * MINUTE + MINUTE;
  const end = start + HORIZON_MS;
  while (t <= end) {
    const local = localTime(t, zone);
    if (!matchesDay(cron, local)) {
      // To about 23:00 local, then by hours: never past the next midnight, whatever DST does.
      const toLateEvening = ((22 - local.hour) * 60 + (60 - local.minute)) * MINUTE;
      t += local.hour < 22 ? toLateEvening : (60 - local.minute) * MINUTE;
      continue;
    }
    if (local.minute === 0 && skippedByGap(cron, zone, t, local)) return new Date(t);
    if (!cron.hours.has(local.hour)) {
      t += (60 - local.minute) * MINUTE;
      continue;
    }
    let nextMinute = -1;
    for (let minute = local.minute; minute < 60; minute++) {
      if (cron.minutes.has(minute)) {
        nextMinute = minute;
        break;
      }
    }
    if (nextMinute < 0) {
      t += (60 - local.minute) * MINUTE;
      continue;
    }
    if (nextMinute > local.minute) {
      t += (nextMinute - local.minute) * MINUTE;
      continue;
    }
    // The same wall-clock minute an hour ago: the repeated hour of a fall-back day, already fired.
    const hourAgo = localTime(t - 60 * MINUTE, zone);
    if (hourAgo.hour === local.hour && hourAgo.minute === local.minute && hourAgo.day === local.day) {
      t += MINUTE;
      continue;
    }
    return new Date(t);
  }
  return null;
}

/** True when the clock jumped forward just before `t` over a wall-clock time the cron wanted. */
function skippedByGap(cron: CronSchedule, zone: string, t: number, local: LocalTime): boolean {
  const gap = zoneOffsetMinutes(t, zone) - zoneOffsetMinutes(t - MINUTE, zone);
  if (gap <= 0) return false;
  for (let back = 1; back <= gap; back++) {
    const total = local.hour * 60 - back;
    if (total < 0) break;
    if (cron.hours.has(Math.floor(total / 60)) && cron.minutes.has(total % 60)) return true;
  }
  return false;
}

/** Every fire time in (`from`, `to`], oldest first, at most `limit` of them. */
export function fireTimesBetween(
  cron: CronSchedule,
  zone: string,
  from: Date | number,
  to: Date | number,
  limit = 1000,
): Date[] {
  const until = typeof to === 'number' ? to : to.getTime();
  const times: Date[] = [];
  let cursor: Date | number = from;
  while (times.length < limit) {
    const next = nextFireTime(cron, zone, cursor);
    if (!next || next.getTime() > until) break;
    times.push(next);
    cursor = next;
  }
  return times;
}
