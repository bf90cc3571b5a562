import type { Limits } from '../config/index.ts';
import type { Database } from '../db/index.ts';
import { RefusedError } from '../errors.ts';

/** A message refused by an inbound rate limit: nothing of it was stored. */
export class RateLimitedError extends RefusedError {
  declare readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds: number) {
    super('rate_limited', message, { retryAfterSeconds });
    this.name = 'RateLimitedError';
  }
}

type Subject = { kind: 'user' | 'channel'; id: string; limit: number };

/**
 * Per-user and per-channel limits on inbound messages, counted in the database per minute so
 * every instance behind a load balancer shares them. Call `check` before a message is stored:
 * a refused message is answered 429 with Retry-After (the client or the platform sends it
 * again), so a stored message is never dropped.
 */
export class InboundRateLimiter {
  readonly #database: Database;
  readonly #limits: () => Pick<Limits, 'inbound_per_user_per_minute' | 'inbound_per_channel_per_minute'>;
  #calls = 0;

  constructor(database: Database, limits: InboundRateLimiter['limits']) {
    this.#database = database;
    this.#limits = limits;
  }

  get limits(): () => Pick<Limits, 'inbound_per_user_per_minute' | 'inbound_per_channel_per_minute'> {
    return this.#limits;
  }

  /** Counts one message of `userId` (and of `channel`, for chat channels); throws RateLimitedError over a limit. */
  async check(message: { userId: string; channel?: string }): Promise<void> {
    const limits = this.#limits();
    const subjects: Subject[] = [
      { kind: 'user' as const, id: message.userId, limit: limits.inbound_per_user_per_minute },
      ...(message.channel
        ? [{ kind: 'channel' as const, id: message.channel, limit: limits.inbound_per_channel_per_minute }]
        : []),
    ].filter((subject) => subject.limit > 0);
    if (subjects.length === 0) return;
    if (++this.#calls % 500 === 0) {
      await this.#database.query(
        "DELETE FROM inbound_rate_windows WHERE window_start < now() - interval '1 hour'",
      );
    }
    for (const subject of subjects) {
      const [row] = await this.#database.query<{ count: number; retry_after: number }>(
        `INSERT INTO inbound_rate_windows (key, window_start, count) VALUES ($1, date_trunc('minute', now()), 1)
         ON CONFLICT (key, window_start) DO UPDATE SET count = inbound_rate_windows.count + 1
         RETURNING count, ceil(extract(epoch FROM date_trunc('minute', now()) + interval '1 minute' - now()))::int AS retry_after`,
        [`${subject.kind}:${subject.id}`],
      );
      if (row && row.count > subject.limit) {
        const retryAfter = Math.max(1, Number(row.retry_after));
        const who = subject.kind === 'user' ? `user ${subject.id}` : `the ${subject.id} channel`;
        throw new RateLimitedError(
          `Too many messages from ${who}: at most ${subject.limit} a minute (limits.inbound_per_${subject.kind}_per_minute). Nothing was stored; send it again in ${retryAfter} s.`,
          retryAfter,
        );
      }
    }
  }
}
