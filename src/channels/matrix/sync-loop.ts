import { errorMessage } from '../../errors.ts';
import type { Logger } from '../../logging/index.ts';
import type { CursorStore } from '../cursor-store.ts';
import { backoffMs, PollLoop } from '../poll-loop.ts';
import { MatrixAnswerError, type MatrixClient } from './matrix-client.ts';
import { parseSync, type SyncResponse } from './matrix-event.ts';

/** Only what Steward reads: messages, membership and encryption; nothing of presence or receipts. */
export const SYNC_FILTER = JSON.stringify({
  presence: { not_types: ['*'] },
  account_data: { not_types: ['*'] },
  room: {
    timeline: {
      limit: 50,
      types: ['m.room.message', 'm.room.encrypted', 'm.room.encryption', 'm.room.member'],
    },
    state: { types: ['m.room.encryption', 'm.room.member'], lazy_load_members: true },
    ephemeral: { not_types: ['*'] },
    account_data: { not_types: ['*'] },
  },
});

export type SyncLoopOptions = {
  client: MatrixClient;
  cursors: CursorStore;
  logger: Logger;
  /**
   * Handles one batch; `first`: the very first sync of this account, whose timeline is history
   * from before Steward was set up. Throws when something could not be stored: the batch is
   * then fetched again (the same `since`), and what was stored is dropped as a redelivery.
   */
  handle(sync: SyncResponse, first: boolean, since: string | null): Promise<void>;
  /** Milliseconds the homeserver holds each /sync open (default 30,000). */
  pollTimeoutMs?: number;
  /** A /sync not answered this long after its own timeout is declared stalled (default 15 s). */
  stallGraceMs?: number;
};

/**
 * Matrix `/sync` long polling. The `since` token is stored only after the batch's events were,
 * so a restart neither replays (the token moved past them) nor skips (the token never moved
 * past an event not stored). A watchdog aborts a poll that outlives its timeout.
 */
export class SyncLoop extends PollLoop {
  readonly #options: SyncLoopOptions;
  readonly #timeoutMs: number;
  /** Where the next /sync starts; undefined until read from the cursors, null before the first. */
  #since: string | null | undefined;
  /** When the last /sync answered (for the operator view and tests). */
  lastSyncAt: Date | null = null;

  constructor(options: SyncLoopOptions) {
    const timeoutMs = options.pollTimeoutMs ?? 30_000;
    super(timeoutMs + (options.stallGraceMs ?? 15_000));
    this.#options = options;
    this.#timeoutMs = timeoutMs;
  }

  protected override async poll(signal: AbortSignal): Promise<void> {
    const { client, cursors } = this.#options;
    if (this.#since === undefined) {
      const saved = await cursors.get('since');
      this.#since = saved || null;
    }
    const since = this.#since;
    const first = since === null;
    const answer = await client.request<unknown>('GET', '/sync', {
      query: {
        filter: SYNC_FILTER,
        // The first sync only learns where "now" is (and pending invites): no waiting.
        timeout: String(first ? 0 : this.#timeoutMs),
        ...(since ? { since } : {}),
      },
      signal,
    });
    this.lastSyncAt = new Date();
    const parsed = parseSync(answer);
    if ('problem' in parsed) {
      // Without a usable next_batch there is no position to move to: ask again later.
      throw new Error(`a /sync answer Steward cannot use: ${parsed.problem}`);
    }
    await this.#options.handle(parsed.sync, first, since);
    await cursors.set('since', parsed.sync.next_batch);
    this.#since = parsed.sync.next_batch;
  }

  protected override stalled(): void {
    this.#options.logger.warn(
      { channel: 'matrix', stalls: this.stalls },
      'matrix: /sync stalled; restarting the poll',
    );
  }

  protected override failed(error: unknown, failures: number): number {
    const refused = error instanceof MatrixAnswerError && error.status === 401;
    const delay =
      error instanceof MatrixAnswerError && error.retryAfterMs
        ? error.retryAfterMs
        : backoffMs(failures, 1000);
    this.#options.logger.warn(
      { channel: 'matrix', err: errorMessage(error), retryInMs: delay },
      refused
        ? 'matrix: the access token was refused; check MATRIX_ACCESS_TOKEN'
        : 'matrix: /sync failed; retrying',
    );
    return delay;
  }
}
