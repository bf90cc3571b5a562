import { type Api, GrammyError } from 'grammy';
import type { Update } from 'grammy/types';
import { errorMessage } from '../../errors.ts';
import type { Logger } from '../../logging/index.ts';
import { waitUnlessAborted } from '../../time/index.ts';
import { grammySignal } from './grammy-signal.ts';

export type LongPollerOptions = {
  api: Api;
  /** Stores one update; throws when it could not (the update is then fetched again). */
  handle(update: Update): Promise<void>;
  logger: Logger;
  /** Seconds Telegram holds each getUpdates open (default 30). */
  pollTimeoutSeconds?: number;
  /** A getUpdates not answered this long after its own timeout is declared stalled (default 15 s). */
  stallGraceMs?: number;
};

/**
 * Telegram long polling for installs without a public URL. An update is confirmed (the offset
 * moves past it) only after it was stored. A watchdog aborts a poll that outlives its timeout
 * and starts a new one, so a silently dead connection never stops the bot for good.
 */
export class LongPoller {
  readonly #options: LongPollerOptions;
  readonly #stopping = new AbortController();
  #loop: Promise<void> | null = null;
  /** Polls the watchdog aborted. */
  stalls = 0;
  /** When the last getUpdates answered (for the operator view). */
  lastPollAt: Date | null = null;

  constructor(options: LongPollerOptions) {
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
    const { api, logger } = this.#options;
    const stop = this.#stopping.signal;
    const timeout = this.#options.pollTimeoutSeconds ?? 30;
    let offset: number | undefined;
    let failures = 0;
    let webhookCleared = false;
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
        timeout * 1000 + (this.#options.stallGraceMs ?? 15_000),
      );
      try {
        if (!webhookCleared) {
          // A webhook left from an earlier configuration makes getUpdates fail with 409.
          await api.deleteWebhook({ drop_pending_updates: false }, grammySignal(poll.signal));
          webhookCleared = true;
        }
        const updates = await api.getUpdates(
          { offset, timeout, allowed_updates: ['message'] },
          grammySignal(poll.signal),
        );
        this.lastPollAt = new Date();
        for (const update of updates) {
          await this.#options.handle(update);
          offset = update.update_id + 1;
        }
        failures = 0;
      } catch (error) {
        if (stop.aborted) break;
        if (stalled) {
          this.stalls++;
          logger.warn(
            { channel: 'telegram', stalls: this.stalls },
            'telegram: getUpdates stalled; restarting the poll',
          );
          continue;
        }
        failures++;
        const retryAfter = error instanceof GrammyError ? error.parameters.retry_after : undefined;
        const delay = retryAfter ? retryAfter * 1000 : Math.min(60_000, 1000 * 2 ** Math.min(failures, 6));
        const conflict = error instanceof GrammyError && error.error_code === 409;
        logger.warn(
          { channel: 'telegram', err: errorMessage(error), retryInMs: delay },
          conflict
            ? 'telegram: another client is polling this bot (or a webhook is set); retrying'
            : 'telegram: polling failed; retrying',
        );
        if (conflict) webhookCleared = false;
        await waitUnlessAborted(delay, stop);
      } finally {
        clearTimeout(watchdog);
        stop.removeEventListener('abort', onStop);
      }
    }
  }
}
