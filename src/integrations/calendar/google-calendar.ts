import { calendar_v3 } from '@googleapis/calendar/build/v3.js';
import type { AuthClient } from 'google-auth-library';
import { localDay } from '../../time/index.ts';
import { googleCall } from '../google/google-call.ts';
import { badResponse, type FailureContext, ProviderError } from '../provider-error.ts';
import type { CalendarEvent, CalendarProvider, EventChanges, NewEvent, TimeRange } from './calendar-types.ts';

/** The primary Google Calendar of the connected account (googleapis; rootUrl = GOOGLE_API_URL). */
export class GoogleCalendar implements CalendarProvider {
  readonly name = 'Google Calendar';
  readonly #api: calendar_v3.Calendar;
  readonly #context: FailureContext;

  constructor(options: { auth: AuthClient; rootUrl?: string; reconnect: string }) {
    this.#api = new calendar_v3.Calendar({
      auth: options.auth,
      rootUrl: options.rootUrl,
      retry: false,
    } as calendar_v3.Options);
    this.#context = { provider: 'Google Calendar', reconnect: options.reconnect };
  }

  async list(range: TimeRange, signal?: AbortSignal): Promise<CalendarEvent[]> {
    const events: CalendarEvent[] = [];
    let pageToken: string | undefined;
    for (let page = 0; page < 20; page++) {
      const data = await googleCall(this.#context, () =>
        this.#api.events.list(
          {
            calendarId: 'primary',
            timeMin: range.from.toISOString(),
            timeMax: range.to.toISOString(),
            singleEvents: true,
            orderBy: 'startTime',
            maxResults: 250,
            pageToken,
          },
          { signal },
        ),
      );
      if (!Array.isArray(data.items ?? []))
        throw badResponse(this.#context, 'events without a list of items');
      for (const item of data.items ?? []) if (item.status !== 'cancelled') events.push(this.#toEvent(item));
      pageToken = data.nextPageToken ?? undefined;
      if (!pageToken) break;
    }
    return events.sort((a, b) => a.start.getTime() - b.start.getTime());
  }

  async get(id: string, signal?: AbortSignal): Promise<CalendarEvent | null> {
    if (!validId(id)) return null;
    const item = await orNull(() =>
      googleCall(this.#context, () =>
        this.#api.events.get({ calendarId: 'primary', eventId: id }, { signal }),
      ),
    );
    return item && item.status !== 'cancelled' ? this.#toEvent(item) : null;
  }

  async create(event: NewEvent, signal?: AbortSignal): Promise<CalendarEvent> {
    const item = await googleCall(this.#context, () =>
      this.#api.events.insert({ calendarId: 'primary', requestBody: toGoogle(event) }, { signal }),
    );
    return this.#toEvent(item);
  }

  async update(id: string, changes: EventChanges, signal?: AbortSignal): Promise<CalendarEvent | null> {
    if (!validId(id)) return null;
    const item = await orNull(() =>
      googleCall(this.#context, () =>
        this.#api.events.patch(
          { calendarId: 'primary', eventId: id, requestBody: toGoogle(changes) },
          { signal },
        ),
      ),
    );
    return item ? this.#toEvent(item) : null;
  }

  async delete(id: string, signal?: AbortSignal): Promise<boolean> {
    if (!validId(id)) return false;
    const done = await orNull(async () => {
      await googleCall(this.#context, () =>
        this.#api.events.delete({ calendarId: 'primary', eventId: id }, { signal }),
      );
      return true;
    });
    return done === true;
  }

  #toEvent(item: calendar_v3.Schema$Event): CalendarEvent {
    const start = item.start?.dateTime ?? item.start?.date;
    const end = item.end?.dateTime ?? item.end?.date;
    if (!item.id || !start || !end) throw badResponse(this.#context, 'an event without id, start or end');
    const rule = (item.recurrence ?? []).find((line) => line.startsWith('RRULE:'));
    return {
      id: item.id,
      title: item.summary ?? '(no title)',
      description: item.description ?? null,
      location: item.location ?? null,
      start: new Date(start),
      end: new Date(end),
      allDay: !item.start?.dateTime,
      timezone: item.start?.timeZone ?? null,
      attendees: (item.attendees ?? []).flatMap((attendee) => (attendee.email ? [attendee.email] : [])),
      recurrence: rule ? rule.slice('RRULE:'.length) : null,
    };
  }
}

function toGoogle(event: Partial<NewEvent> & { timezone: string }): calendar_v3.Schema$Event {
  const body: calendar_v3.Schema$Event = {};
  if (event.title !== undefined) body.summary = event.title;
  if (event.description !== undefined) body.description = event.description;
  if (event.location !== undefined) body.location = event.location;
  const when = (instant: Date) =>
    event.allDay
      ? { date: localDay(instant, event.timezone) }
      : { dateTime: instant.toISOString(), timeZone: event.timezone };
  if (event.start) body.start = when(event.start);
  if (event.end) body.end = when(event.end);
  if (event.attendees !== undefined) body.attendees = event.attendees.map((email) => ({ email }));
  if (event.recurrence !== undefined) body.recurrence = event.recurrence ? [`RRULE:${event.recurrence}`] : [];
  return body;
}

function validId(id: string): boolean {
  return /^[A-Za-z0-9_@.-]{1,1024}$/.test(id);
}

async function orNull<T>(call: () => Promise<T>): Promise<T | null> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof ProviderError && (error.issue === 'not_found' || /HTTP 410/.test(error.message)))
      return null;
    throw error;
  }
}
