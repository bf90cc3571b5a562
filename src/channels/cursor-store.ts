import type { Queryable } from '../db/index.ts';
import type { ChannelName } from './types.ts';

/**
 * Where a channel that reaches out for its events (Matrix's `/sync`, Discord's Gateway) has got
 * to, kept in the database so a restart resumes there. `set` throws when the database is down:
 * the caller keeps the old position and reads the same events again.
 */
export type CursorStore = {
  get(name: string): Promise<string | null>;
  set(name: string, value: string): Promise<void>;
};

/** The channel's cursors in `channel_cursors`. */
export function channelCursors(db: Queryable, channel: ChannelName): CursorStore {
  return {
    async get(name) {
      const rows = await db.query<{ value: string }>(
        'SELECT value FROM channel_cursors WHERE channel = $1 AND name = $2',
        [channel, name],
      );
      return rows[0]?.value ?? null;
    },
    async set(name, value) {
      await db.query(
        `INSERT INTO channel_cursors (channel, name, value) VALUES ($1, $2, $3)
         ON CONFLICT (channel, name) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
        [channel, name, value],
      );
    },
  };
}

/** Cursors that live as long as the process (a one-off command that never starts the channel). */
export function memoryCursors(): CursorStore {
  const values = new Map<string, string>();
  return {
    get: async (name) => values.get(name) ?? null,
    set: async (name, value) => {
      values.set(name, value);
    },
  };
}
