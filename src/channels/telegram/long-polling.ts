import { type Api, GrammyError } from 'grammy';
import type { Update } from 'grammy/types';
import { errorMessage } from '../../errors.ts';
import type { Logger } from '../../logging/index.ts';
import { backoffMs, PollLoop } from '../poll-loop.ts';
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
export class LongPoller extends PollLoop {
  readonly #options: LongPollerOptions;
  readonly #timeoutSeconds: number;
  #offset: number | undefined;
  #webhookCleared = false;
  /** When the last getUpdates answered (for the operator view). */
  lastPollAt: Date | null = null;

  constructor(options: LongPollerOptions) {
    const timeoutSeconds = options.pollTimeoutSeconds ?? 30;
    super(timeoutSeconds * 1000 + (options.stallGraceMs ?? 15_000));
    this.#options = options;
    this.#timeoutSeconds = timeoutSeconds;
  }

  protected override async poll(signal: AbortSignal): Promise<void> {
    const { api } = this.#options;
    if (!this.#webhookCleared) {
      // A webhook left from an earlier configuration makes getUpdates fail with 409.
      await api.deleteWebhook({ drop_pending_updates: false }, grammySignal(signal));
      this.#webhookCleared = true;
    }
    const updates = await api.getUpdates(
      { offset: this.#offset, timeout: this.#timeoutSeconds, allowed_updates: ['message'] },
      grammySignal(signal),
    );
    this.lastPollAt = new Date();
    for (const update of updates) {
      await this.#options.handle(update);
      this.#offset = update.update_id + 1;
    }
  }

  protected override stalled(): void {
    this.#options.logger.warn(
      { channel: 'telegram', stalls: this.stalls },
      'telegram: getUpdates stalled; restarting the poll',
    );
  }

  protected override failed(error: unknown, failures: number): number {
    const retryAfter = error instanceof GrammyError ? error.parameters.retry_after : undefined;
    const delay = retryAfter ? retryAfter * 1000 : backoffMs(failures, 2000);
    const conflict = error instanceof GrammyError && error.error_code === 409;
    this.#options.logger.warn(
      { channel: 'telegram', err: errorMessage(error), retryInMs: delay },
      conflict
        ? 'telegram: another client is polling this bot (or a webhook is set); retrying'
        : 'telegram: polling failed; retrying',
    );
    if (conflict) this.#webhookCleared = false;
    return delay;
  }
}
