import { z } from 'zod';
import { type EventChanges, normalizeRrule } from '../../../integrations/index.ts';
import { flag } from '../../flags.ts';
import { defineHandler, fail, ok, type SkillContext } from '../../types.ts';
import { integrationsOf, withProvider } from '../provider-call.ts';
import { instantFlag } from './dates.ts';
import { eventReceipt, formatEventLine } from './format.ts';

const NONE = ['none', 'null', 'clear'];
const ADDRESS = /^[^\s<>@",;]+@[^\s<>@",;]+$/;

type Details = { description?: string; location?: string; attendees?: string[]; recurrence?: string };

/** The optional details shared by create and update, validated; `none` clears on update. */
function details(
  flags: Details,
  clearable: boolean,
): { ok: true; changes: Partial<EventChanges> } | { ok: false; error: string } {
  const changes: Partial<EventChanges> = {};
  const cleared = (value: string | undefined) =>
    clearable && value !== undefined && NONE.includes(value.trim().toLowerCase());
  if (flags.description !== undefined)
    changes.description = cleared(flags.description) ? null : flags.description;
  if (flags.location !== undefined) changes.location = cleared(flags.location) ? null : flags.location;
  if (flags.attendees !== undefined) {
    const attendees = flags.attendees.filter((entry) => !NONE.includes(entry.toLowerCase()));
    const bad = attendees.find((entry) => !ADDRESS.test(entry));
    if (bad) return { ok: false, error: `--attendees: "${bad}" is not an email address.` };
    changes.attendees = attendees;
  }
  if (flags.recurrence !== undefined) {
    if (cleared(flags.recurrence)) changes.recurrence = null;
    else {
      const rule = normalizeRrule(flags.recurrence);
      if (!rule.ok) return { ok: false, error: `--recurrence: ${rule.error}` };
      changes.recurrence = rule.rrule;
    }
  }
  return { ok: true, changes };
}

function times(flags: { start?: string; end?: string; duration?: number }, ctx: SkillContext) {
  const start = flags.start !== undefined ? instantFlag(flags.start, 'start', ctx) : null;
  if (start && !start.ok) return start;
  let end = flags.end !== undefined ? instantFlag(flags.end, 'end', ctx) : null;
  if (end && !end.ok) return end;
  if (!end && start?.ok && flags.duration !== undefined) {
    end = { ok: true, instant: new Date(start.instant.getTime() + flags.duration * 60_000) };
  }
  return { ok: true as const, start: start?.instant, end: end?.ok ? end.instant : undefined };
}

const detailFlags = {
  description: flag.text().optional(),
  location: flag.string().optional(),
  attendees: flag.list().optional(),
  recurrence: flag.string().optional(),
};

export const createEventHandler = defineHandler({
  name: 'calendar.create',
  flags: z
    .object({
      title: flag.string(),
      start: flag.string(),
      end: flag.string().optional(),
      duration: flag.int({ min: 1, max: 14 * 24 * 60 }).optional(),
      ...detailFlags,
    })
    .strict(),
  async execute(flags, ctx) {
    if (flags.end !== undefined && flags.duration !== undefined)
      return fail('Give --end or --duration, not both.');
    const when = times(
      { ...flags, duration: flags.duration ?? (flags.end === undefined ? 60 : undefined) },
      ctx,
    );
    if (!when.ok) return fail(when.error);
    if (!when.start || !when.end) return fail('--start needs a date-time: YYYY-MM-DDTHH:MM.');
    if (when.end <= when.start) return fail('--end must be after --start.');
    const extra = details(flags, false);
    if (!extra.ok) return fail(extra.error);
    return withProvider(integrationsOf(ctx).calendar(ctx.user.id), async (calendar) => {
      const event = await calendar.create(
        {
          title: flags.title,
          start: when.start!,
          end: when.end!,
          timezone: ctx.user.timezone,
          ...extra.changes,
        },
        ctx.signal,
      );
      return ok(`Created in the ${calendar.name}: ${formatEventLine(event, ctx.user.timezone)}`, {
        sideEffects: [`calendar event ${event.id} created`],
        metadata: { id: event.id, provider: calendar.name },
        receipt: eventReceipt(event, ctx.user.timezone),
      });
    });
  },
});

export const updateEventHandler = defineHandler({
  name: 'calendar.update',
  flags: z
    .object({
      id: flag.string(),
      title: flag.string().optional(),
      start: flag.string().optional(),
      end: flag.string().optional(),
      ...detailFlags,
    })
    .strict(),
  async execute(flags, ctx) {
    const when = times(flags, ctx);
    if (!when.ok) return fail(when.error);
    const extra = details(flags, true);
    if (!extra.ok) return fail(extra.error);
    const changes: EventChanges = { timezone: ctx.user.timezone, ...extra.changes };
    if (flags.title !== undefined) changes.title = flags.title;
    if (when.start) changes.start = when.start;
    if (when.end) changes.end = when.end;
    if (Object.keys(changes).length === 1)
      return fail(
        'Nothing to change: give --title, --start, --end, --description, --location, --attendees or --recurrence.',
      );
    return withProvider(integrationsOf(ctx).calendar(ctx.user.id), async (calendar) => {
      const current = await calendar.get(flags.id, ctx.signal);
      if (!current)
        return fail(`No event with id ${flags.id} in the ${calendar.name}. Find ids with calendar.list.`);
      // Moving only the start keeps the duration.
      if (changes.start && !changes.end)
        changes.end = new Date(changes.start.getTime() + (current.end.getTime() - current.start.getTime()));
      const start = changes.start ?? current.start;
      const end = changes.end ?? current.end;
      if (end <= start) return fail('The end would be before the start: give both --start and --end.');
      const event = await calendar.update(flags.id, changes, ctx.signal);
      if (!event)
        return fail(`No event with id ${flags.id} in the ${calendar.name}. Find ids with calendar.list.`);
      return ok(`Updated: ${formatEventLine(event, ctx.user.timezone)}`, {
        sideEffects: [`calendar event ${event.id} updated`],
        metadata: { id: event.id, provider: calendar.name },
        receipt: eventReceipt(event, ctx.user.timezone),
      });
    });
  },
});

export const deleteEventHandler = defineHandler({
  name: 'calendar.delete',
  flags: z.object({ id: flag.string() }).strict(),
  async execute(flags, ctx) {
    return withProvider(integrationsOf(ctx).calendar(ctx.user.id), async (calendar) => {
      const done = await calendar.delete(flags.id, ctx.signal);
      if (!done)
        return fail(`No event with id ${flags.id} in the ${calendar.name}. Find ids with calendar.list.`);
      return ok(`Deleted event [${flags.id}] from the ${calendar.name}.`, {
        sideEffects: [`calendar event ${flags.id} deleted`],
        metadata: { id: flags.id, provider: calendar.name },
      });
    });
  },
});

export const calendarFeedHandler = defineHandler({
  name: 'calendar.feed',
  flags: z.object({}).strict(),
  async execute(_flags, ctx) {
    const url = await integrationsOf(ctx).calendarFeedUrl(ctx.user.id, { rotate: false });
    return ok(
      `${url}\nSubscribe to this URL in a phone or desktop calendar to see your local calendar. Keep it secret: anyone with it can read your events.`,
      { metadata: { url } },
    );
  },
});

export const calendarFeedRotateHandler = defineHandler({
  name: 'calendar.feed_rotate',
  flags: z.object({}).strict(),
  async execute(_flags, ctx) {
    const url = await integrationsOf(ctx).calendarFeedUrl(ctx.user.id, { rotate: true });
    return ok(
      `${url}\nA new secret URL: the previous one no longer works. Subscribe to this one in your calendars. Keep it secret: anyone with it can read your events.`,
      { metadata: { url } },
    );
  },
});
