import { z } from 'zod';
import { freeSlots } from '../../../integrations/index.ts';
import { localDayLabel, localTime } from '../../../time/index.ts';
import { fenceExternal } from '../../external.ts';
import { flag } from '../../flags.ts';
import { defineHandler, fail, ok } from '../../types.ts';
import { integrationsOf, withProvider } from '../provider-call.ts';
import { dayRange } from './dates.ts';
import { formatEventDetail, formatEventLine } from './format.ts';

const HH_MM = /^([01]\d|2[0-3]):[0-5]\d$/;

export const listEventsHandler = defineHandler({
  name: 'calendar.list',
  flags: z.object({ from: flag.string().optional(), to: flag.string().optional() }).strict(),
  async execute(flags, ctx) {
    const range = dayRange(flags.from, flags.to, ctx);
    if (!range.ok) return fail(range.error);
    return withProvider(integrationsOf(ctx).calendar(ctx.user.id), async (calendar) => {
      const events = await calendar.list(range, ctx.signal);
      const span = range.fromDay === range.toDay ? range.fromDay : `${range.fromDay} to ${range.toDay}`;
      const metadata = {
        ids: events.map((event) => event.id),
        count: events.length,
        provider: calendar.name,
      };
      if (events.length === 0)
        return ok(`No events ${span} (${calendar.name}, ${ctx.user.timezone}).`, { metadata });
      const lines = events.map((event) => formatEventLine(event, ctx.user.timezone));
      return ok(
        `${events.length} event${events.length === 1 ? '' : 's'} ${span} (${calendar.name}, times in ${ctx.user.timezone}):\n${fenceExternal('calendar:list', lines.join('\n'))}`,
        { metadata },
      );
    });
  },
});

export const getEventHandler = defineHandler({
  name: 'calendar.get',
  flags: z.object({ id: flag.string() }).strict(),
  async execute(flags, ctx) {
    return withProvider(integrationsOf(ctx).calendar(ctx.user.id), async (calendar) => {
      const event = await calendar.get(flags.id, ctx.signal);
      if (!event)
        return fail(`No event with id ${flags.id} in the ${calendar.name}. Find ids with calendar.list.`);
      return ok(formatEventDetail(event, ctx.user.timezone, calendar.name), {
        metadata: { id: event.id, event },
      });
    });
  },
});

export const freeTimeHandler = defineHandler({
  name: 'calendar.free',
  flags: z
    .object({
      from: flag.string().optional(),
      to: flag.string().optional(),
      duration: flag.int({ min: 5, max: 24 * 60 }).default(30),
      day_start: flag.string().default('09:00'),
      day_end: flag.string().default('18:00'),
    })
    .strict(),
  async execute(flags, ctx) {
    const range = dayRange(flags.from, flags.to, ctx);
    if (!range.ok) return fail(range.error);
    if (!HH_MM.test(flags.day_start) || !HH_MM.test(flags.day_end) || flags.day_start >= flags.day_end) {
      return fail(
        '--day-start and --day-end are 24-hour HH:MM times, start before end (e.g. 09:00 and 18:00).',
      );
    }
    return withProvider(integrationsOf(ctx).calendar(ctx.user.id), async (calendar) => {
      const events = await calendar.list(range, ctx.signal);
      const slots = freeSlots(events, range, {
        timezone: ctx.user.timezone,
        dayStart: flags.day_start,
        dayEnd: flags.day_end,
        minMinutes: flags.duration,
      });
      const zone = ctx.user.timezone;
      if (slots.length === 0)
        return ok(
          `No free slot of ${flags.duration} min between ${flags.day_start} and ${flags.day_end} (${calendar.name}).`,
          { metadata: { slots: [] } },
        );
      const lines = slots.map(
        (slot) =>
          `${localDayLabel(slot.from, zone)} ${localTime(slot.from, zone)}–${localTime(slot.to, zone)}`,
      );
      return ok(
        `Free (${flags.duration} min or more, ${flags.day_start}–${flags.day_end} ${zone}, ${calendar.name}):\n${lines.join('\n')}`,
        {
          metadata: {
            slots: slots.map((slot) => ({ from: slot.from.toISOString(), to: slot.to.toISOString() })),
          },
        },
      );
    });
  },
});
