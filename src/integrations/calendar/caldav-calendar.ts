import { randomUUID } from 'node:crypto';
import type ICAL from 'ical.js';
import { createDAVClient, type DAVCalendar } from 'tsdav';
import { wallClock, zonedToInstant } from '../../time/index.ts';
import {
  badResponse,
  type FailureContext,
  httpFailure,
  networkFailure,
  ProviderError,
} from '../provider-error.ts';
import type { CalendarEvent, CalendarProvider, EventChanges, NewEvent, TimeRange } from './calendar-types.ts';
import { ical } from './ical.ts';
import { occurrences } from './recurrence.ts';
import { addTimezones } from './vtimezone.ts';

export type CaldavOptions = {
  url: string;
  username: string;
  password: string;
  reconnect: string;
  fetch?: typeof fetch;
};

type IcalTime = InstanceType<typeof ICAL.Time>;
type IcalComponent = InstanceType<typeof ICAL.Component>;

/**
 * The first event calendar of a CalDAV account (tsdav: iCloud, Fastmail, Nextcloud…). Ids are
 * the object file names (`<uid>.ics`); recurring events are expanded here, in their own zone.
 */
export class CaldavCalendar implements CalendarProvider {
  readonly name = 'CalDAV';
  readonly #options: CaldavOptions;
  readonly #context: FailureContext;
  readonly #fetch: typeof fetch;
  #calendar: Promise<{ client: Awaited<ReturnType<typeof createDAVClient>>; calendar: DAVCalendar }> | null =
    null;

  constructor(options: CaldavOptions) {
    this.#options = options;
    this.#fetch = options.fetch ?? fetch;
    this.#context = {
      provider: `the CalDAV server ${new URL(options.url).host}`,
      reconnect: options.reconnect,
    };
  }

  async list(range: TimeRange, signal?: AbortSignal): Promise<CalendarEvent[]> {
    const { client, calendar } = await this.#connect(signal);
    const objects = await this.#guard(signal, () =>
      client.fetchCalendarObjects({
        calendar,
        timeRange: { start: range.from.toISOString(), end: range.to.toISOString() },
        fetchOptions: { signal },
      }),
    );
    const events: CalendarEvent[] = [];
    for (const object of objects) {
      if (typeof object.data !== 'string') continue;
      const id = fileName(object.url);
      for (const event of parseEvents(object.data, id, this.#context)) {
        if (!event.recurrence) {
          if (event.end > range.from && event.start < range.to) events.push(event);
          continue;
        }
        const durationMs = event.end.getTime() - event.start.getTime();
        const timezone = event.timezone ?? 'UTC';
        for (const start of occurrences(
          { start: event.start, durationMs, rrule: event.recurrence, timezone },
          range,
        )) {
          events.push({ ...event, start, end: new Date(start.getTime() + durationMs) });
        }
      }
    }
    return events.sort((a, b) => a.start.getTime() - b.start.getTime());
  }

  async get(id: string, signal?: AbortSignal): Promise<CalendarEvent | null> {
    const object = await this.#fetchObject(id, signal);
    return object ? (parseEvents(object.data, id, this.#context)[0] ?? null) : null;
  }

  async create(event: NewEvent, signal?: AbortSignal): Promise<CalendarEvent> {
    const { client, calendar } = await this.#connect(signal);
    const uid = randomUUID();
    const filename = `${uid}.ics`;
    const text = eventIcs(uid, event);
    const response = await this.#guard(signal, () =>
      client.createCalendarObject({ calendar, filename, iCalString: text, fetchOptions: { signal } }),
    );
    if (!response.ok) throw this.#status(response);
    return parseEvents(text, filename, this.#context)[0]!;
  }

  async update(id: string, changes: EventChanges, signal?: AbortSignal): Promise<CalendarEvent | null> {
    const object = await this.#fetchObject(id, signal);
    if (!object) return null;
    const current = parseEvents(object.data, id, this.#context)[0];
    if (!current) return null;
    const merged: NewEvent = {
      title: changes.title ?? current.title,
      start: changes.start ?? current.start,
      end: changes.end ?? current.end,
      timezone: current.timezone ?? changes.timezone,
      description: changes.description !== undefined ? changes.description : current.description,
      location: changes.location !== undefined ? changes.location : current.location,
      attendees: changes.attendees ?? current.attendees,
      recurrence: changes.recurrence !== undefined ? changes.recurrence : current.recurrence,
    };
    const uid = uidOf(object.data) ?? id.replace(/\.ics$/, '');
    const text = eventIcs(uid, merged);
    const { client } = await this.#connect(signal);
    const response = await this.#guard(signal, () =>
      client.updateCalendarObject({
        calendarObject: { url: object.url, data: text, etag: object.etag },
        fetchOptions: { signal },
      }),
    );
    if (response.status === 404) return null;
    if (!response.ok) throw this.#status(response);
    return parseEvents(text, id, this.#context)[0]!;
  }

  async delete(id: string, signal?: AbortSignal): Promise<boolean> {
    const object = await this.#fetchObject(id, signal);
    if (!object) return false;
    const { client } = await this.#connect(signal);
    const response = await this.#guard(signal, () =>
      client.deleteCalendarObject({
        calendarObject: { url: object.url, etag: object.etag },
        fetchOptions: { signal },
      }),
    );
    if (response.status === 404) return false;
    if (!response.ok) throw this.#status(response);
    return true;
  }

  async #fetchObject(
    id: string,
    signal?: AbortSignal,
  ): Promise<{ url: string; data: string; etag?: string } | null> {
    if (!/^[A-Za-z0-9_.@-]{1,200}$/.test(id)) return null;
    const { calendar } = await this.#connect(signal);
    const url = new URL(id, calendar.url.endsWith('/') ? calendar.url : `${calendar.url}/`).toString();
    const response = await this.#guard(signal, () =>
      this.#fetch(url, { headers: { authorization: this.#basic() }, signal }),
    );
    if (response.status === 404) return null;
    if (!response.ok) throw this.#status(response);
    const data = await response.text();
    if (!data.includes('BEGIN:VCALENDAR')) throw badResponse(this.#context, 'an event that is not iCalendar');
    return { url, data, etag: response.headers.get('etag') ?? undefined };
  }

  #connect(signal?: AbortSignal) {
    if (!this.#calendar) {
      this.#calendar = this.#guard(signal, async () => {
        const client = await createDAVClient({
          serverUrl: this.#options.url,
          credentials: { username: this.#options.username, password: this.#options.password },
          authMethod: 'Basic',
          defaultAccountType: 'caldav',
          fetch: this.#fetch,
        });
        const calendars = await client.fetchCalendars();
        const calendar = calendars.find((entry) => !entry.components || entry.components.includes('VEVENT'));
        if (!calendar) {
          throw new ProviderError(
            this.#context.provider,
            'rejected',
            `${this.#context.provider} has no event calendar for this account.`,
          );
        }
        return { client, calendar };
      }).catch((error: unknown) => {
        this.#calendar = null;
        throw error;
      });
    }
    return this.#calendar;
  }

  async #guard<T>(signal: AbortSignal | undefined, call: () => Promise<T>): Promise<T> {
    signal?.throwIfAborted();
    try {
      return await call();
    } catch (error) {
      if (error instanceof ProviderError || signal?.aborted) throw error;
      const message = String((error as Error).message ?? error);
      if (/401|unauthori[sz]ed|invalid credentials/i.test(message))
        throw httpFailure(this.#context, 401, '', { cause: error });
      if (/429/.test(message)) throw httpFailure(this.#context, 429, '', { cause: error });
      if (error instanceof SyntaxError || /xml|parse|Unexpected/i.test(message))
        throw badResponse(this.#context, message, error);
      throw networkFailure(this.#context, error);
    }
  }

  #status(response: Response): ProviderError {
    const retry = Number(response.headers.get('retry-after'));
    return httpFailure(this.#context, response.status, response.statusText, {
      retryAfterSeconds: Number.isFinite(retry) && retry > 0 ? retry : null,
    });
  }

  #basic(): string {
    return `Basic ${Buffer.from(`${this.#options.username}:${this.#options.password}`).toString('base64')}`;
  }
}

function fileName(url: string): string {
  return decodeURIComponent(url.replace(/\/+$/, '').split('/').pop() ?? url);
}

function uidOf(text: string): string | null {
  return /^UID:(.+)$/m.exec(text)?.[1]?.trim() ?? null;
}

/** VEVENTs of an iCalendar object; zoned times resolved with Intl (TZID is usually an IANA name). */
function parseEvents(text: string, id: string, context: FailureContext): CalendarEvent[] {
  let root: IcalComponent;
  try {
    root = new (ical().Component)(ical().parse(text));
  } catch (error) {
    throw badResponse(context, `unreadable iCalendar (${(error as Error).message})`, error);
  }
  return root
    .getAllSubcomponents('vevent')
    .filter((vevent) => !vevent.getFirstPropertyValue('recurrence-id'))
    .map((vevent) => {
      const startProperty = vevent.getFirstProperty('dtstart');
      const startTime = startProperty?.getFirstValue() as IcalTime | undefined;
      if (!startTime) throw badResponse(context, 'an event without DTSTART');
      const tzid = (startProperty?.getParameter('tzid') as string | undefined) ?? null;
      const endTime = vevent.getFirstPropertyValue('dtend') as IcalTime | null;
      const start = instant(startTime, tzid);
      const end = endTime
        ? instant(endTime, tzid)
        : new Date(start.getTime() + (startTime.isDate ? 86_400_000 : 3_600_000));
      const rrule = vevent.getFirstPropertyValue('rrule') as { toString(): string } | null;
      return {
        id,
        title: String(vevent.getFirstPropertyValue('summary') ?? '(no title)'),
        description: (vevent.getFirstPropertyValue('description') as string | null) ?? null,
        location: (vevent.getFirstPropertyValue('location') as string | null) ?? null,
        start,
        end,
        allDay: startTime.isDate,
        timezone: tzid,
        attendees: vevent
          .getAllProperties('attendee')
          .map((property) => String(property.getFirstValue()).replace(/^mailto:/i, '')),
        recurrence: rrule ? rrule.toString() : null,
      };
    });
}

function instant(time: IcalTime, tzid: string | null): Date {
  if (time.zone?.tzid === 'UTC' || (!tzid && !time.isDate)) return time.toJSDate();
  const local = { year: time.year, month: time.month, day: time.day, hour: time.hour, minute: time.minute };
  try {
    return zonedToInstant(local, tzid ?? 'UTC');
  } catch {
    return zonedToInstant(local, 'UTC');
  }
}

/** A VCALENDAR holding one VEVENT; recurring events carry TZID wall-clock times. */
function eventIcs(uid: string, event: NewEvent): string {
  const calendar = new (ical().Component)(['vcalendar', [], []]);
  calendar.addPropertyWithValue('prodid', '-//Steward//CalDAV//EN');
  calendar.addPropertyWithValue('version', '2.0');
  if (event.recurrence)
    addTimezones(calendar, [{ timezone: event.timezone, start: event.start }], new Date());
  const vevent = new (ical().Component)('vevent');
  vevent.addPropertyWithValue('uid', uid);
  vevent.addPropertyWithValue('dtstamp', ical().Time.fromJSDate(new Date(), true));
  vevent.addPropertyWithValue('summary', event.title);
  for (const [name, value] of [
    ['dtstart', event.start],
    ['dtend', event.end],
  ] as const) {
    if (event.recurrence) {
      const wall = wallClock(value, event.timezone);
      const property = vevent.addPropertyWithValue(
        name,
        ical().Time.fromData({
          year: wall.year,
          month: wall.month,
          day: wall.day,
          hour: wall.hour,
          minute: wall.minute,
          second: 0,
          isDate: false,
        }),
      );
      property.setParameter('tzid', event.timezone);
    } else {
      vevent.addPropertyWithValue(name, ical().Time.fromJSDate(value, true));
    }
  }
  if (event.recurrence) vevent.addPropertyWithValue('rrule', ical().Recur.fromString(event.recurrence));
  if (event.description) vevent.addPropertyWithValue('description', event.description);
  if (event.location) vevent.addPropertyWithValue('location', event.location);
  for (const attendee of event.attendees ?? []) vevent.addPropertyWithValue('attendee', `mailto:${attendee}`);
  calendar.addSubcomponent(vevent);
  return calendar.toString().replace(/\r?\n/g, '\r\n');
}
