import { Cron } from 'croner';

/**
 * Five-field cron expressions (`minute hour day-of-month month day-of-week`) evaluated in an
 * IANA time zone by croner. Wall-clock semantics across daylight saving: a time that happens
 * twice on a fall-back day fires once (the first time); a time skipped on a spring-forward day
 * fires at the first minute after the gap. When both day fields are restricted, a day matching
 * either one fires (Vixie cron). Steward validates the fields itself first, so that a mistake
 * is named in the user's terms (croner counts days and months from 0 in its messages).
 */
export type CronSchedule = { readonly expression: string };

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
  for (const [index, part] of parts.entries()) {
    const problem = fieldProblem(part, FIELDS[index]!);
    if (problem) return { ok: false, problem: `cron "${expression}": ${problem}` };
  }
  try {
    scheduleIn(expanded, 'UTC');
  } catch (error) {
    return {
      ok: false,
      problem: `cron "${expression}": ${(error as Error).message.replace(/^CronPattern: /, '')}`,
    };
  }
  return { ok: true, cron: Object.freeze({ expression }) };
}

/** What is wrong with one field, or null. */
function fieldProblem(part: string, spec: FieldSpec): string | null {
  for (const item of part.split(',')) {
    const [range, stepText, extra] = item.split('/');
    if (extra !== undefined || range === undefined || range === '')
      return `the ${spec.name} field "${part}" is not valid`;
    if (stepText !== undefined && (!/^\d+$/.test(stepText) || Number(stepText) < 1))
      return `the step "/${stepText}" in the ${spec.name} field must be a whole number of at least 1`;
    if (range === '*') continue;
    const bounds = range.split('-');
    if (bounds.length > 2) return `the ${spec.name} field "${part}" is not valid`;
    const first = fieldValue(bounds[0]!, spec);
    if (typeof first === 'string') return first;
    const last = bounds.length === 2 ? fieldValue(bounds[1]!, spec) : first;
    if (typeof last === 'string') return last;
    if (last < first) return `the ${spec.name} range "${range}" runs backwards`;
  }
  return null;
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

const schedules = new Map<string, Cron>();

/** croner's schedule for an expression in a zone, built once (a paused Cron never runs anything). */
function scheduleIn(expression: string, zone: string): Cron {
  const key = `${zone} ${expression}`;
  let schedule = schedules.get(key);
  if (!schedule) {
    schedule = new Cron(MACROS[expression.toLowerCase()] ?? expression, { timezone: zone, paused: true });
    schedules.set(key, schedule);
  }
  return schedule;
}

/** The first fire time strictly after `after`, or null when the expression never fires (30 2 30 2 *). */
export function nextFireTime(cron: CronSchedule, zone: string, after: Date | number): Date | null {
  return scheduleIn(cron.expression, zone).nextRun(typeof after === 'number' ? new Date(after) : after);
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
