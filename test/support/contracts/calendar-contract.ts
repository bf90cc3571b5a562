import { expect, it } from 'vitest';
import type { CalendarProvider } from '../../../src/integrations/index.ts';

/**
 * The behaviour every CalendarProvider must have. `make` returns an empty calendar; the suite
 * declares its tests in the caller's describe block.
 */
export function calendarProviderContract(make: () => Promise<CalendarProvider>): void {
  const day = (iso: string) => new Date(iso);

  it('creates an event and finds it by id and in a range that overlaps it', async () => {
    const calendar = await make();
    const created = await calendar.create({
      title: 'Design review',
      start: day('2026-03-02T10:00:00Z'),
      end: day('2026-03-02T11:00:00Z'),
      timezone: 'Europe/Paris',
      description: 'Bring the mockups',
      location: 'Room 4',
      attendees: ['ana@example.com'],
    });
    expect(created.title).toBe('Design review');
    const fetched = await calendar.get(created.id);
    expect(fetched?.start.toISOString()).toBe('2026-03-02T10:00:00.000Z');
    expect(fetched?.end.toISOString()).toBe('2026-03-02T11:00:00.000Z');
    expect(fetched?.description).toBe('Bring the mockups');
    expect(fetched?.attendees).toEqual(['ana@example.com']);
    const listed = await calendar.list({
      from: day('2026-03-02T10:30:00Z'),
      to: day('2026-03-03T00:00:00Z'),
    });
    expect(listed.map((event) => event.id)).toContain(created.id);
    const outside = await calendar.list({
      from: day('2026-03-02T11:00:00Z'),
      to: day('2026-03-03T00:00:00Z'),
    });
    expect(outside.map((event) => event.id)).not.toContain(created.id);
  });

  it('updates and deletes; unknown ids are null or false, not errors', async () => {
    const calendar = await make();
    const created = await calendar.create({
      title: 'Call',
      start: day('2026-03-04T09:00:00Z'),
      end: day('2026-03-04T09:30:00Z'),
      timezone: 'UTC',
    });
    const moved = await calendar.update(created.id, {
      timezone: 'UTC',
      start: day('2026-03-04T14:00:00Z'),
      end: day('2026-03-04T14:30:00Z'),
      title: 'Call with Bo',
    });
    expect(moved?.title).toBe('Call with Bo');
    expect(moved?.start.toISOString()).toBe('2026-03-04T14:00:00.000Z');
    expect(await calendar.delete(created.id)).toBe(true);
    expect(await calendar.get(created.id)).toBeNull();
    expect(await calendar.delete(created.id)).toBe(false);
    expect(await calendar.get('no-such-event')).toBeNull();
    expect(await calendar.update('no-such-event', { timezone: 'UTC', title: 'x' })).toBeNull();
  });

  it('expands a weekly series at the same local time across a DST change', async () => {
    const calendar = await make();
    // 09:00 in Paris: 08:00Z in winter, 07:00Z after the switch on 2026-03-29.
    const series = await calendar.create({
      title: 'Standup',
      start: day('2026-03-23T08:00:00Z'),
      end: day('2026-03-23T08:15:00Z'),
      timezone: 'Europe/Paris',
      recurrence: 'FREQ=WEEKLY;COUNT=3',
    });
    const events = await calendar.list({
      from: day('2026-03-20T00:00:00Z'),
      to: day('2026-04-20T00:00:00Z'),
    });
    const starts = events
      .filter((event) => event.title === 'Standup')
      .map((event) => event.start.toISOString());
    expect(starts).toEqual([
      '2026-03-23T08:00:00.000Z',
      '2026-03-30T07:00:00.000Z',
      '2026-04-06T07:00:00.000Z',
    ]);
    expect((await calendar.get(series.id))?.recurrence).toContain('FREQ=WEEKLY');
  });
}
