import { randomBytes } from 'node:crypto';
import type { Queryable } from '../../db/index.ts';
import type { CalendarEvent, CalendarProvider, EventChanges, NewEvent, TimeRange } from './calendar-types.ts';
import { occurrences } from './recurrence.ts';

export type EventRow = {
  id: string;
  user_id: string;
  title: string;
  description: string | null;
  location: string | null;
  starts_at: Date;
  ends_at: Date;
  timezone: string;
  rrule: string | null;
  attendees: string[] | string;
  status: 'confirmed' | 'cancelled';
  sequence: number;
  created_at: Date;
  updated_at: Date;
};

const COLUMNS =
  'id, user_id, title, description, location, starts_at, ends_at, timezone, rrule, attendees, status, sequence, created_at, updated_at';

export function newEventId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return `ev_${[...randomBytes(10)].map((byte) => alphabet[byte % alphabet.length]).join('')}`;
}

export function toEvent(row: EventRow, start?: Date): CalendarEvent {
  const startsAt = new Date(row.starts_at);
  const duration = new Date(row.ends_at).getTime() - startsAt.getTime();
  const begin = start ?? startsAt;
  return {
    id: row.id,
    title: row.title,
    description: row.description,
    location: row.location,
    start: begin,
    end: new Date(begin.getTime() + duration),
    allDay: false,
    timezone: row.timezone,
    attendees: typeof row.attendees === 'string' ? JSON.parse(row.attendees) : row.attendees,
    recurrence: row.rrule,
  };
}

/**
 * The embedded calendar: one user's events in the database, always available. Recurring
 * events are one row expanded on read. Delete cancels the row (kept, hidden, dropped from the feed).
 */
export class LocalCalendar implements CalendarProvider {
  readonly name = 'local calendar';
  readonly #db: Queryable;
  readonly #userId: string;
  readonly #randomId: () => string;

  constructor(db: Queryable, userId: string, options: { randomId?: () => string } = {}) {
    this.#db = db;
    this.#userId = userId;
    this.#randomId = options.randomId ?? newEventId;
  }

  async list(range: TimeRange): Promise<CalendarEvent[]> {
    const rows = await this.#db.query<EventRow>(
      `SELECT ${COLUMNS} FROM calendar_events
       WHERE user_id = $1 AND status = 'confirmed' AND starts_at < $3
         AND (rrule IS NOT NULL OR ends_at > $2)
       ORDER BY starts_at, id`,
      [this.#userId, range.from, range.to],
    );
    const events: CalendarEvent[] = [];
    for (const row of rows) {
      if (!row.rrule) {
        events.push(toEvent(row));
        continue;
      }
      const start = new Date(row.starts_at);
      const durationMs = new Date(row.ends_at).getTime() - start.getTime();
      for (const occurrence of occurrences(
        { start, durationMs, rrule: row.rrule, timezone: row.timezone },
        range,
      )) {
        events.push(toEvent(row, occurrence));
      }
    }
    return events.sort((a, b) => a.start.getTime() - b.start.getTime() || a.id.localeCompare(b.id));
  }

  async get(id: string): Promise<CalendarEvent | null> {
    const row = await this.#row(id);
    return row ? toEvent(row) : null;
  }

  async create(event: NewEvent): Promise<CalendarEvent> {
    const rows = await this.#db.query<EventRow>(
      `INSERT INTO calendar_events (id, user_id, title, description, location, starts_at, ends_at, timezone, rrule, attendees)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${COLUMNS}`,
      [
        this.#randomId(),
        this.#userId,
        event.title,
        event.description ?? null,
        event.location ?? null,
        event.start,
        event.end,
        event.timezone,
        event.recurrence ?? null,
        JSON.stringify(event.attendees ?? []),
      ],
    );
    return toEvent(rows[0]!);
  }

  async update(id: string, changes: EventChanges): Promise<CalendarEvent | null> {
    const row = await this.#row(id);
    if (!row) return null;
    const rows = await this.#db.query<EventRow>(
      `UPDATE calendar_events SET title = $3, description = $4, location = $5, starts_at = $6, ends_at = $7,
         rrule = $8, attendees = $9, sequence = sequence + 1, updated_at = now()
       WHERE id = $1 AND user_id = $2 RETURNING ${COLUMNS}`,
      [
        id,
        this.#userId,
        changes.title ?? row.title,
        changes.description !== undefined ? changes.description : row.description,
        changes.location !== undefined ? changes.location : row.location,
        changes.start ?? row.starts_at,
        changes.end ?? row.ends_at,
        changes.recurrence !== undefined ? changes.recurrence : row.rrule,
        JSON.stringify(changes.attendees ?? toEvent(row).attendees),
      ],
    );
    return rows[0] ? toEvent(rows[0]) : null;
  }

  async delete(id: string): Promise<boolean> {
    const rows = await this.#db.query(
      `UPDATE calendar_events SET status = 'cancelled', sequence = sequence + 1, updated_at = now()
       WHERE id = $1 AND user_id = $2 AND status = 'confirmed' RETURNING id`,
      [id, this.#userId],
    );
    return rows.length > 0;
  }

  async #row(id: string): Promise<EventRow | null> {
    const rows = await this.#db.query<EventRow>(
      `SELECT ${COLUMNS} FROM calendar_events WHERE id = $1 AND user_id = $2 AND status = 'confirmed'`,
      [id, this.#userId],
    );
    return rows[0] ?? null;
  }
}

/** Every event of the user, cancelled ones included (the feed tells subscribers about cancellations). */
export async function allLocalEvents(db: Queryable, userId: string): Promise<EventRow[]> {
  return db.query<EventRow>(
    `SELECT ${COLUMNS} FROM calendar_events WHERE user_id = $1 ORDER BY starts_at, id`,
    [userId],
  );
}
