import { addDays, addMonths, dayOfWeek } from './dates.ts';

/** A recurrence rule as stored: one of the accepted forms, lowercased, single-spaced. */
export type RecurrenceRule = { unit: 'day' | 'weekday' | 'week' | 'month' | 'year'; every: number };

export type RecurrenceResult = { ok: true; rule: string } | { ok: false; error: string };

export const RECURRENCE_FORMS =
  'daily, weekdays, weekly, monthly, yearly, every N days, every N weeks, every N months';

const NAMED: Record<string, RecurrenceRule> = {
  daily: { unit: 'day', every: 1 },
  weekdays: { unit: 'weekday', every: 1 },
  weekly: { unit: 'week', every: 1 },
  monthly: { unit: 'month', every: 1 },
  yearly: { unit: 'year', every: 1 },
};
const EVERY = /^every (\d{1,3}) (day|days|week|weeks|month|months)$/;

/** Checks a rule and returns it in its stored form (`Every 2 Weeks` → `every 2 weeks`). */
export function parseRecurrence(input: string): RecurrenceResult {
  const text = input.trim().toLowerCase().replace(/\s+/g, ' ');
  if (text in NAMED) return { ok: true, rule: text };
  const match = EVERY.exec(text);
  const count = match ? Number(match[1]) : 0;
  if (match && count >= 1) {
    const unit = (match[2] ?? '').replace(/s$/, '');
    return { ok: true, rule: `every ${count} ${unit}${count === 1 ? '' : 's'}` };
  }
  return { ok: false, error: `"${input.trim()}" is not a recurrence rule. Use one of: ${RECURRENCE_FORMS}.` };
}

function ruleOf(rule: string): RecurrenceRule {
  const named = NAMED[rule];
  if (named) return named;
  const match = EVERY.exec(rule);
  if (!match) throw new Error(`invalid stored recurrence rule: ${rule}`);
  const unit = (match[2] ?? '').replace(/s$/, '') as 'day' | 'week' | 'month';
  return { unit, every: Number(match[1]) };
}

/** The date `steps` steps of `rule` after `date` (months counted from `date`, so no drift). */
export function advance(rule: string, date: string, steps = 1): string {
  const { unit, every } = ruleOf(rule);
  switch (unit) {
    case 'day':
      return addDays(date, every * steps);
    case 'week':
      return addDays(date, 7 * every * steps);
    case 'month':
      return addMonths(date, every * steps);
    case 'year':
      return addMonths(date, 12 * every * steps);
    case 'weekday': {
      let next = date;
      for (let step = 0; step < steps; step++) {
        next = addDays(next, 1);
        while (dayOfWeek(next) === 0 || dayOfWeek(next) === 6) next = addDays(next, 1);
      }
      return next;
    }
  }
}

/**
 * The due date of the occurrence after one completed on `today`: the rule applied to the old
 * due date (or to today when there was none), repeated until it lands after today, so a task
 * finished late does not leave a trail of already-overdue occurrences.
 */
export function nextOccurrence(rule: string, dueDate: string | null, today: string): string {
  const base = dueDate ?? today;
  // Weekdays carry no anchor, so the first weekday after the later of the two is the answer.
  if (rule === 'weekdays') return advance(rule, base > today ? base : today);
  let steps = 1;
  let next = advance(rule, base, steps);
  // Bounded: a daily rule from a due date decades in the past still ends well within this.
  while (next <= today && steps < 100_000) {
    steps += 1;
    next = advance(rule, base, steps);
  }
  return next;
}
