import type { CalendarEvent } from '../../../integrations/index.ts';
import { localDay, localDayLabel, localTime } from '../../../time/index.ts';
import { fenceExternal } from '../../external.ts';

/** `Mon 2026-01-05 10:00–11:00 [id] Title · location` (24-hour times in the user's zone). */
/** An event for a receipt line: `Team sync, Mon 3 Feb 10:00 (ev_123)`. */
export function eventReceipt(event: CalendarEvent, timezone: string): string {
  const when = event.allDay
    ? localDayLabel(event.start, timezone)
    : `${localDayLabel(event.start, timezone)} ${localTime(event.start, timezone)}`;
  return `${event.title.replace(/\s+/g, ' ')}, ${when} (${event.id})`;
}

export function formatEventLine(event: CalendarEvent, timezone: string): string {
  const sameDay = localDay(event.start, timezone) === localDay(new Date(event.end.getTime() - 1), timezone);
  const time = event.allDay
    ? 'all day'
    : `${localTime(event.start, timezone)}–${sameDay ? '' : `${localDay(event.end, timezone)} `}${localTime(event.end, timezone)}`;
  const parts = [
    `${localDayLabel(event.start, timezone)} ${time}`,
    `[${event.id}]`,
    event.title.replace(/\s+/g, ' '),
  ];
  if (event.location) parts.push(`· ${event.location}`);
  if (event.recurrence) parts.push('· repeats');
  return parts.join(' ');
}

/** The event's details; its description (written by whoever sent the invitation) is fenced. */
export function formatEventDetail(event: CalendarEvent, timezone: string, source: string): string {
  const lines = [formatEventLine(event, timezone)];
  if (event.attendees.length) lines.push(`Attendees: ${event.attendees.join(', ')}`);
  if (event.recurrence) lines.push(`Repeats: RRULE ${event.recurrence}`);
  if (event.timezone && event.timezone !== timezone) lines.push(`Written in time zone ${event.timezone}`);
  const body = fenceExternal(
    `calendar:${event.id}`,
    [
      `Title: ${event.title}`,
      event.description ? `Description:\n${event.description}` : 'Description: (none)',
    ].join('\n'),
  );
  return `${lines.join('\n')}\n${body}\n(${source})`;
}
