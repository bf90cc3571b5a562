/*
 * Wall-clock time in an IANA zone without a date library, in one place for the whole program:
 * Intl gives a zone's offset at an instant; a local time becomes an instant by guessing with the
 * offset and correcting once. One formatter per zone is kept (building one costs about a
 * millisecond, formatting microseconds); the cache is bounded.
 */

const formatters = new Map<string, Intl.DateTimeFormat>();
const MAX_ZONES = 1_000;

/** Whether `timezone` is an IANA zone this Node knows (`Europe/Berlin`, `UTC`). */
export function isTimeZone(timezone: string): boolean {
  try {
    formatter(timezone);
    return true;
  } catch {
    return false;
  }
}

/** The formatter for `timezone`; throws a RangeError for an unknown zone. */
function formatter(timezone: string): Intl.DateTimeFormat {
  let format = formatters.get(timezone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      weekday: 'short',
    });
    if (formatters.size >= MAX_ZONES) formatters.clear();
    formatters.set(timezone, format);
  }
  return format;
}

export type WallClock = {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  weekday: string;
};

export function wallClock(instant: Date, timezone: string): WallClock {
  const parts = Object.fromEntries(
    formatter(timezone)
      .formatToParts(instant)
      .map((part) => [part.type, part.value]),
  );
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
    weekday: String(parts.weekday),
  };
}

/** The zone's offset from UTC at `instant`, in minutes (Paris in winter: 60). */
export function zoneOffsetMinutes(instant: Date, timezone: string): number {
  const wall = wallClock(instant, timezone);
  const asUtc = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second);
  return Math.round((asUtc - Math.floor(instant.getTime() / 1000) * 1000) / 60_000);
}

/** The instant at which the wall clock in `timezone` shows the given local time. */
export function zonedToInstant(
  local: { year: number; month: number; day: number; hour: number; minute: number; second?: number },
  timezone: string,
): Date {
  const guess = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second ?? 0);
  const first = guess - zoneOffsetMinutes(new Date(guess), timezone) * 60_000;
  const second = guess - zoneOffsetMinutes(new Date(first), timezone) * 60_000;
  return new Date(second);
}

const pad = (value: number) => String(value).padStart(2, '0');

/** `YYYY-MM-DD` of a wall clock. */
export const wallDay = (wall: WallClock): string => `${wall.year}-${pad(wall.month)}-${pad(wall.day)}`;

/** 24-hour `HH:MM` of a wall clock. */
export const wallTime = (wall: WallClock): string => `${pad(wall.hour)}:${pad(wall.minute)}`;

/** `YYYY-MM-DD` of `instant` in `timezone`. */
export function localDay(instant: Date, timezone: string): string {
  return wallDay(wallClock(instant, timezone));
}

/** 24-hour `HH:MM` of `instant` in `timezone`. */
export function localTime(instant: Date, timezone: string): string {
  return wallTime(wallClock(instant, timezone));
}

/** `YYYY-MM-DD HH:MM` of `instant` in `timezone`; in UTC when the zone is unknown. */
export function localMinute(instant: Date, timezone: string): string {
  const zone = isTimeZone(timezone) ? timezone : 'UTC';
  return `${localDay(instant, zone)} ${localTime(instant, zone)}`;
}

/** ISO 8601 with the zone's offset: `2026-03-30T09:00:00+02:00`. */
export function formatInZone(instant: Date | number, timezone: string): string {
  const date = typeof instant === 'number' ? new Date(instant) : instant;
  const wall = wallClock(date, timezone);
  const offset = zoneOffsetMinutes(date, timezone);
  const sign = offset < 0 ? '-' : '+';
  const absolute = Math.abs(offset);
  return `${String(wall.year).padStart(4, '0')}-${pad(wall.month)}-${pad(wall.day)}T${pad(wall.hour)}:${pad(wall.minute)}:${pad(wall.second)}${sign}${pad(Math.floor(absolute / 60))}:${pad(absolute % 60)}`;
}

/** `Mon 2026-01-05` of `instant` in `timezone`. */
export function localDayLabel(instant: Date, timezone: string): string {
  return `${wallClock(instant, timezone).weekday} ${localDay(instant, timezone)}`;
}

/** Midnight starting `YYYY-MM-DD` in `timezone`. */
export function startOfLocalDay(day: string, timezone: string): Date {
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  return zonedToInstant({ year, month, day: date, hour: 0, minute: 0 }, timezone);
}

export type DateTimeInput = { ok: true; instant: Date; dateOnly: boolean } | { ok: false; error: string };

/**
 * Reads `YYYY-MM-DDTHH:MM` (local time in `timezone`), the same with a `Z` or `±HH:MM` offset,
 * or a bare `YYYY-MM-DD` (midnight local, `dateOnly`).
 */
export function parseDateTime(input: string, timezone: string): DateTimeInput {
  const text = input.trim().replace(' ', 'T');
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2}))?(Z|[+-]\d{2}:?\d{2})?)?$/.exec(text);
  if (!match) {
    return {
      ok: false,
      error: `"${input}" is not a date-time: write YYYY-MM-DDTHH:MM (your local time), optionally with an offset such as +02:00 or Z`,
    };
  }
  const [, y, mo, d, h, mi, s, offset] = match;
  const local = {
    year: Number(y),
    month: Number(mo),
    day: Number(d),
    hour: Number(h ?? 0),
    minute: Number(mi ?? 0),
  };
  const check = new Date(Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute));
  if (
    check.getUTCMonth() !== local.month - 1 ||
    check.getUTCDate() !== local.day ||
    local.hour > 23 ||
    local.minute > 59 ||
    Number(s ?? 0) > 59
  ) {
    return { ok: false, error: `"${input}" is not a real date and time` };
  }
  if (offset) {
    const iso = `${y}-${mo}-${d}T${h}:${mi}:${s ?? '00'}${offset.length === 5 ? `${offset.slice(0, 3)}:${offset.slice(3)}` : offset}`;
    return { ok: true, instant: new Date(iso), dateOnly: false };
  }
  return { ok: true, instant: zonedToInstant(local, timezone), dateOnly: h === undefined };
}
