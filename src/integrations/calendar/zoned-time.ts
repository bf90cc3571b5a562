/*
 * Wall-clock time in an IANA zone without a date library: Intl gives a zone's offset at an
 * instant; a local time becomes an instant by guessing with the offset and correcting once.
 */

const formatters = new Map<string, Intl.DateTimeFormat>();

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
  local: { year: number; month: number; day: number; hour: number; minute: number },
  timezone: string,
): Date {
  const guess = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute);
  const first = guess - zoneOffsetMinutes(new Date(guess), timezone) * 60_000;
  const second = guess - zoneOffsetMinutes(new Date(first), timezone) * 60_000;
  return new Date(second);
}

const pad = (value: number) => String(value).padStart(2, '0');

/** `YYYY-MM-DD` of `instant` in `timezone`. */
export function localDay(instant: Date, timezone: string): string {
  const wall = wallClock(instant, timezone);
  return `${wall.year}-${pad(wall.month)}-${pad(wall.day)}`;
}

/** 24-hour `HH:MM` of `instant` in `timezone`. */
export function localTime(instant: Date, timezone: string): string {
  const wall = wallClock(instant, timezone);
  return `${pad(wall.hour)}:${pad(wall.minute)}`;
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
