export type CalendarEvent = {
  /** Pass back to get, update and delete. For one occurrence of a series, the provider's id of it. */
  id: string;
  title: string;
  description: string | null;
  location: string | null;
  start: Date;
  end: Date;
  allDay: boolean;
  /** The zone the event was written in, when the provider says. */
  timezone: string | null;
  attendees: string[];
  /** RFC 5545 RRULE (without the `RRULE:` prefix) of the series, when recurring. */
  recurrence: string | null;
};

export type NewEvent = {
  title: string;
  start: Date;
  end: Date;
  allDay?: boolean;
  /** The user's zone: recurrences repeat at this wall-clock time. */
  timezone: string;
  description?: string | null;
  location?: string | null;
  attendees?: string[];
  recurrence?: string | null;
};

export type EventChanges = Partial<Omit<NewEvent, 'timezone'>> & { timezone: string };

export type TimeRange = { from: Date; to: Date };

/**
 * One calendar. `list` returns every event overlapping the range, recurring ones expanded
 * into occurrences, sorted by start. Unknown ids are null / false; provider failures throw
 * ProviderError. Every method honours `signal`.
 */
export interface CalendarProvider {
  /** Shown to the user: `local calendar`, `Google Calendar`, `CalDAV`. */
  readonly name: string;
  list(range: TimeRange, signal?: AbortSignal): Promise<CalendarEvent[]>;
  get(id: string, signal?: AbortSignal): Promise<CalendarEvent | null>;
  create(event: NewEvent, signal?: AbortSignal): Promise<CalendarEvent>;
  update(id: string, changes: EventChanges, signal?: AbortSignal): Promise<CalendarEvent | null>;
  delete(id: string, signal?: AbortSignal): Promise<boolean>;
}
