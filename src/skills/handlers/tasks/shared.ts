import { z } from 'zod';
import {
  dateInputError,
  parseDateInput,
  parseRecurrence,
  type TaskContext,
  type TaskFailure,
} from '../../../tasks/index.ts';
import { flag } from '../../flags.ts';
import { fail, type SkillContext, type SkillResult } from '../../types.ts';

/** The task manager's view of a skill call: the caller's user, clock and identity for history. */
export function taskContext(ctx: SkillContext): TaskContext {
  return {
    database: ctx.services.database,
    userId: ctx.user.id,
    timezone: ctx.user.timezone,
    actor: ctx.agentId ? `agent:${ctx.agentId}` : `user:${ctx.user.id}`,
    executionId: ctx.executionId,
    now: ctx.now,
  };
}

export const failWith = (failure: TaskFailure): SkillResult =>
  fail(failure.message, { metadata: { code: failure.code } });

/** Words that clear a field in tasks.update. */
export const isNone = (value: string) => ['none', 'null', 'clear'].includes(value.trim().toLowerCase());

/** A date as people write it (`2026-03-01`, `tomorrow`, `next monday`); `none` too when `clearable`. */
export function dateFlag(options: { clearable?: boolean } = {}) {
  return flag.string().superRefine((value, issues) => {
    if (options.clearable && isNone(value)) return;
    const error = dateInputError(value);
    if (error) issues.addIssue({ code: 'custom', message: withoutFinalStop(error) });
  });
}

/** A recurrence rule (`weekly`, `every 2 weeks`); `none` too when `clearable`. */
export function recurrenceFlag(options: { clearable?: boolean } = {}) {
  return flag.string().superRefine((value, issues) => {
    if (options.clearable && isNone(value)) return;
    const parsed = parseRecurrence(value);
    if (!parsed.ok) issues.addIssue({ code: 'custom', message: withoutFinalStop(parsed.error) });
  });
}

// The executor appends its own full stop to each flag error.
const withoutFinalStop = (message: string) => message.replace(/\.$/, '');

/**
 * One or more values of an enum: `--status todo blocked`, `--status todo,blocked`, repeated.
 * A preprocess over the enum array (not list().pipe()), so JSON Schema still shows the values.
 */
export function enumList<const Values extends readonly [string, ...string[]]>(values: Values) {
  return z.preprocess(
    (value) => {
      const items = Array.isArray(value) ? value : typeof value === 'string' ? [value] : value;
      if (!Array.isArray(items)) return items;
      return items
        .flatMap((item) => String(item).split(','))
        .map((item) => item.trim().toLowerCase())
        .filter((item) => item.length > 0);
    },
    z
      .array(z.enum(values, { error: `must be one of: ${values.join(', ')}` }), {
        error: 'needs one or more values',
      })
      .min(1, 'needs one or more values'),
  );
}

/** Resolves a date flag in the user's zone; a `DateInputResult` error becomes a skill error. */
export function resolveDate(
  input: string,
  ctx: SkillContext,
): { ok: true; date: string } | { ok: false; result: SkillResult } {
  const parsed = parseDateInput(input, ctx.user.timezone, ctx.now());
  return parsed.ok ? parsed : { ok: false, result: fail(parsed.error) };
}

/** `me` is the calling user. */
export const resolveAssignee = (assignee: string, ctx: SkillContext) =>
  assignee.trim().toLowerCase() === 'me' ? ctx.user.id : assignee.trim();
