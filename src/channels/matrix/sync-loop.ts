import { errorMessage } from '../../errors.ts';
import type { Logger } from '../../logging/index.ts';
import { waitUnlessAborted } from '../../time/index.ts';
import type { CursorStore } from '../cursor-store.ts';
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
export class SyncLoop {
  readonly #options: SyncLoopOptions;
  readonly #stopping = new AbortController();
  #loop: Promise<void> | null = null;
  /** When the last /sync answered (for the operator view and tests). */
  lastSyncAt: Date | null = null;
  stalls = 0;

  constructor(options: SyncLoopOptions) {
    this.#options = options;
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  async stop(): Promise<void> {
    this.#stopping.abort();
    await this.#loop;
  }

  async #run(): Promise<void> {
    const { client, cursors, logger } = this.#options;
    const stop = this.#stopping.signal;
    const timeout = this.#options.pollTimeoutMs ?? 30_000;
    let since: string | null | undefined;
    let failures = 0;
    while (!stop.aborted) {
      const poll = new AbortController();
      const onStop = () => poll.abort();
      stop.addEventListener('abort', onStop);
      let stalled = false;
      const watchdog = setTimeout(
        () => {
          stalled = true;
          poll.abort();
        },
        timeout + (this.#options.stallGraceMs ?? 15_000),
      );
      try {
        if (since === undefined) {
          const saved = await cursors.get('since');
          since = saved || null;
        }
        const first = since === null;
        const answer = await client.request<unknown>('GET', '/sync', {
          query: {
            filter: SYNC_FILTER,
            // The first sync only learns where "now" is (and pending invites): no waiting.
            timeout: String(first ? 0 : timeout),
            ...(since ? { since } : {}),
          },
          signal: poll.signal,
        });
        this.lastSyncAt = new Date();
        const parsed = parseSync(answer);
        if ('problem' in parsed) {
          // Without a usable next_batch there is no position to move to: ask again later.
          throw new Error(`a /sync answer Steward cannot use: ${parsed.problem}`);
        }
        await this.#options.handle(parsed.sync, first, since);
        await cursors.set('since', parsed.sync.next_batch);
        since = parsed.sync.next_batch;
        failures = 0;
      } catch (error) {
        if (stop.aborted) break;
        if (stalled) {
          this.stalls++;
          logger.warn(
            { channel: 'matrix', stalls: this.stalls },
            'matrix: /sync stalled; restarting the poll',
          );
          continue;
        }
        failures++;
        const refused = error instanceof MatrixAnswerError && error.status === 401;
        const delay =
          error instanceof MatrixAnswerError && error.retryAfterMs
            ? error.retryAfterMs
            : Math.min(60_000, 500 * 2 ** Math.min(failures, 7));
        logger.warn(
          { channel: 'matrix', err: errorMessage(error), retryInMs: delay },
          refused
            ? 'matrix: the access token was refused; check MATRIX_ACCESS_TOKEN'
            : 'matrix: /sync failed; retrying',
        );
        await waitUnlessAborted(delay, stop);
      } finally {
        clearTimeout(watchdog);
        stop.removeEventListener('abort', onStop);
      }
    }
  }
}
