import { addDays, localDate, parseDateInput } from '../../../tasks/index.ts';
import { parseDateTime, startOfLocalDay } from '../../../time/index.ts';
import type { SkillContext } from '../../types.ts';

export type DayRange =
  | { ok: true; from: Date; to: Date; fromDay: string; toDay: string }
  | { ok: false; error: string };

/** Inclusive `--from` / `--to` dates in the user's zone → [midnight of from, midnight after to). */
export function dayRange(
  from: string | undefined,
  to: string | undefined,
  ctx: SkillContext,
  defaultDays = 1,
): DayRange {
  const zone = ctx.user.timezone;
  const today = localDate(zone, ctx.now()) ?? new Date().toISOString().slice(0, 10);
  const start =
    from === undefined ? { ok: true as const, date: today } : parseDateInput(from, zone, ctx.now());
  if (!start.ok) return { ok: false, error: `--from: ${start.error}` };
  const end =
    to === undefined
      ? { ok: true as const, date: addDays(start.date, defaultDays - 1) }
      : parseDateInput(to, zone, ctx.now());
  if (!end.ok) return { ok: false, error: `--to: ${end.error}` };
  if (end.date < start.date) return { ok: false, error: `--to ${end.date} is before --from ${start.date}.` };
  return {
    ok: true,
    from: startOfLocalDay(start.date, zone),
    to: startOfLocalDay(addDays(end.date, 1), zone),
    fromDay: start.date,
    toDay: end.date,
  };
}

/** A `--start` / `--end` value: local time in the user's zone unless it carries an offset. */
export function instantFlag(
  value: string,
  name: string,
  ctx: SkillContext,
): { ok: true; instant: Date } | { ok: false; error: string } {
  const parsed = parseDateTime(value, ctx.user.timezone);
  if (!parsed.ok) return { ok: false, error: `--${name}: ${parsed.error}` };
  return { ok: true, instant: parsed.instant };
}
