import { localDay, startOfLocalDay, zonedToInstant } from '../../time/index.ts';
import type { CalendarEvent, TimeRange } from './calendar-types.ts';

export type FreeSlotOptions = {
  timezone: string;
  /** Working hours, `HH:MM` in the user's zone. */
  dayStart: string;
  dayEnd: string;
  minMinutes: number;
};

/** Free intervals of at least `minMinutes` inside working hours of each day of `range`, given the busy events. */
export function freeSlots(
  events: readonly CalendarEvent[],
  range: TimeRange,
  options: FreeSlotOptions,
): TimeRange[] {
  const busy = events
    .map((event) => ({ from: event.start.getTime(), to: event.end.getTime() }))
    .sort((a, b) => a.from - b.from);
  const slots: TimeRange[] = [];
  const [startHour, startMinute] = options.dayStart.split(':').map(Number) as [number, number];
  const [endHour, endMinute] = options.dayEnd.split(':').map(Number) as [number, number];
  let day = localDay(range.from, options.timezone);
  const lastDay = localDay(new Date(range.to.getTime() - 1), options.timezone);
  for (let guard = 0; guard < 400 && day <= lastDay; guard++) {
    const [year, month, date] = day.split('-').map(Number) as [number, number, number];
    let cursor = Math.max(
      zonedToInstant(
        { year, month, day: date, hour: startHour, minute: startMinute },
        options.timezone,
      ).getTime(),
      range.from.getTime(),
    );
    const end = Math.min(
      zonedToInstant(
        { year, month, day: date, hour: endHour, minute: endMinute },
        options.timezone,
      ).getTime(),
      range.to.getTime(),
    );
    for (const interval of busy) {
      if (interval.to <= cursor || interval.from >= end) continue;
      if (interval.from - cursor >= options.minMinutes * 60_000)
        slots.push({ from: new Date(cursor), to: new Date(interval.from) });
      cursor = Math.max(cursor, interval.to);
    }
    if (end - cursor >= options.minMinutes * 60_000)
      slots.push({ from: new Date(cursor), to: new Date(end) });
    day = localDay(
      new Date(startOfLocalDay(day, options.timezone).getTime() + 36 * 3_600_000),
      options.timezone,
    );
  }
  return slots;
}
