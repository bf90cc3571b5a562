import type ICAL from 'ical.js';
import { wallClock, zoneOffsetMinutes } from '../../time/index.ts';
import { ical } from './ical.ts';

/*
 * RFC 5545 §3.6.5: every TZID an iCalendar object uses needs a VTIMEZONE saying when the zone
 * is at which offset. Built from what Intl knows of the IANA zone: its offset changes are found
 * over a window of years, and each run of yearly changes that keep one rule ("the last Sunday
 * of March at 02:00") becomes a STANDARD or DAYLIGHT observance with that RRULE; changes that
 * follow no weekday rule stay single observances of their own.
 */

const DAY_MS = 86_400_000;
const WEEKDAYS = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'];

type Transition = { at: Date; from: number; to: number };

/** Every change of the zone's UTC offset in [from, to), found day by day then to the minute. */
export function offsetTransitions(timezone: string, from: Date, to: Date): Transition[] {
  const transitions: Transition[] = [];
  let previous = from.getTime();
  let previousOffset = zoneOffsetMinutes(from, timezone);
  for (let time = previous + DAY_MS; time < to.getTime() + DAY_MS; time += DAY_MS) {
    const offset = zoneOffsetMinutes(new Date(time), timezone);
    if (offset !== previousOffset) {
      // The change lies in (previous, time]: narrow it to the minute.
      let low = previous;
      let high = time;
      while (high - low > 60_000) {
        const middle = low + Math.floor((high - low) / 120_000) * 60_000;
        if (zoneOffsetMinutes(new Date(middle), timezone) === previousOffset) low = middle;
        else high = middle;
      }
      if (high < to.getTime()) transitions.push({ at: new Date(high), from: previousOffset, to: offset });
      previousOffset = offset;
    }
    previous = time;
  }
  return transitions;
}

type Onset = {
  transition: Transition;
  /** The local time (in the offset before the change) at which it happens. */
  local: { year: number; month: number; day: number; hour: number; minute: number; weekday: number };
  /** `BYDAY` of a yearly rule: `-1SU` for the last Sunday, `2SU` for the second. */
  byDay: string;
};

function onsetOf(transition: Transition): Onset {
  const local = new Date(transition.at.getTime() + transition.from * 60_000);
  const day = local.getUTCDate();
  const daysInMonth = new Date(Date.UTC(local.getUTCFullYear(), local.getUTCMonth() + 1, 0)).getUTCDate();
  const weekday = local.getUTCDay();
  const ordinal = day + 7 > daysInMonth ? -1 : Math.ceil(day / 7);
  return {
    transition,
    local: {
      year: local.getUTCFullYear(),
      month: local.getUTCMonth() + 1,
      day,
      hour: local.getUTCHours(),
      minute: local.getUTCMinutes(),
      weekday,
    },
    byDay: `${ordinal}${WEEKDAYS[weekday]}`,
  };
}

/** Onsets that one yearly rule describes: same offsets, month, weekday rule and local time, a year apart. */
function sameRule(a: Onset, b: Onset): boolean {
  return (
    a.transition.from === b.transition.from &&
    a.transition.to === b.transition.to &&
    a.local.month === b.local.month &&
    a.byDay === b.byDay &&
    a.local.hour === b.local.hour &&
    a.local.minute === b.local.minute &&
    b.local.year === a.local.year + 1
  );
}

function localTime(local: Onset['local']): InstanceType<typeof ICAL.Time> {
  return ical().Time.fromData({ ...local, second: 0, isDate: false });
}

function observance(
  kind: 'standard' | 'daylight',
  from: number,
  to: number,
  start: InstanceType<typeof ICAL.Time>,
): InstanceType<typeof ICAL.Component> {
  const component = new (ical().Component)(kind);
  component.addPropertyWithValue('dtstart', start);
  component.addPropertyWithValue('tzoffsetfrom', ical().UtcOffset.fromSeconds(from * 60));
  component.addPropertyWithValue('tzoffsetto', ical().UtcOffset.fromSeconds(to * 60));
  return component;
}

/**
 * The VTIMEZONE of `timezone` (an IANA name) correct from `from` on: every offset change
 * Intl knows up to `to`, and the yearly rule in force at `to` continuing after it.
 */
export function vtimezone(
  timezone: string,
  window: { from: Date; to: Date },
): InstanceType<typeof ICAL.Component> {
  const zone = new (ical().Component)('vtimezone');
  zone.addPropertyWithValue('tzid', timezone);
  const onsets = offsetTransitions(timezone, window.from, window.to).map(onsetOf);
  // Where a zone alternates, the larger offset is its daylight (summer) time.
  const kindOf = (transition: Transition): 'standard' | 'daylight' =>
    transition.to > transition.from ? 'daylight' : 'standard';
  // The offset in force when the window opens (a time before every onset has none otherwise).
  const initial = zoneOffsetMinutes(window.from, timezone);
  const initialKind = onsets[0] && kindOf(onsets[0].transition) === 'standard' ? 'daylight' : 'standard';
  const opening = localTime({ ...wallClock(window.from, timezone), weekday: 0 });
  zone.addSubcomponent(observance(initialKind, initial, initial, opening));
  const lastOfKind = new Map<string, Onset>();
  for (const onset of onsets) lastOfKind.set(kindOf(onset.transition), onset);
  // Runs of onsets of one kind that follow one yearly rule, in order.
  const runs: Onset[][] = [];
  const openRun = new Map<string, Onset[]>();
  for (const onset of onsets) {
    const kind = kindOf(onset.transition);
    const run = openRun.get(kind);
    if (run && sameRule(run.at(-1)!, onset)) run.push(onset);
    else {
      const fresh = [onset];
      runs.push(fresh);
      openRun.set(kind, fresh);
    }
  }
  for (const run of runs) {
    const first = run[0]!;
    const last = run.at(-1)!;
    const kind = kindOf(first.transition);
    const component = observance(kind, first.transition.from, first.transition.to, localTime(first.local));
    // The rule in force at the window's end goes on; a run that stopped earlier (a zone that
    // dropped daylight time, or changed its rule) ends at its last change.
    const continues =
      run.length > 1 &&
      lastOfKind.get(kind) === last &&
      window.to.getTime() - last.transition.at.getTime() < 400 * DAY_MS;
    if (run.length > 1) {
      const parts = ['FREQ=YEARLY', `BYMONTH=${first.local.month}`, `BYDAY=${first.byDay}`];
      if (!continues) parts.push(`UNTIL=${ical().Time.fromJSDate(last.transition.at, true).toICALString()}`);
      component.addPropertyWithValue('rrule', ical().Recur.fromString(parts.join(';')));
    }
    zone.addSubcomponent(component);
  }
  return zone;
}

/** Years past the later of now and the last event the transitions are listed for; the rules go on after. */
const YEARS_AHEAD = 5;

/**
 * Adds one VTIMEZONE per zone the zoned times use, each correct from a year before its
 * earliest time (RFC 5545: every TZID needs one). Call before adding the events.
 */
export function addTimezones(
  calendar: InstanceType<typeof ICAL.Component>,
  zonedTimes: ReadonlyArray<{ timezone: string; start: Date }>,
  now: Date,
): void {
  const earliest = new Map<string, number>();
  let latest = now.getTime();
  for (const { timezone, start } of zonedTimes) {
    earliest.set(timezone, Math.min(earliest.get(timezone) ?? Number.POSITIVE_INFINITY, start.getTime()));
    latest = Math.max(latest, start.getTime());
  }
  const to = new Date(latest + YEARS_AHEAD * 366 * DAY_MS);
  for (const [timezone, first] of [...earliest].sort(([a], [b]) => a.localeCompare(b))) {
    const from = new Date(Date.UTC(new Date(first).getUTCFullYear() - 1, 0, 1));
    calendar.addSubcomponent(vtimezone(timezone, { from, to }));
  }
}
