import type { Database, Queryable } from '../db/index.ts';
import { errorMessage } from '../errors.ts';
import type { Logger } from '../logging/index.ts';
import {
  chatsWithOpenMessages,
  type FinalOutcome,
  firstOpenOfChat,
  markSending,
  type OutboxRow,
  settleOutbound,
} from './outbox.ts';
import type { ChannelAdapter, ChannelName, SendResult } from './types.ts';

export type OutboxSenderDeps = {
  database: Database;
  adapter(channel: ChannelName): ChannelAdapter | undefined;
  logger: Logger;
  now?: () => Date;
  /** How often due retries are looked for (default 1 s). */
  intervalMs?: number;
  /** A send not answered within this is ambiguous (default 30 s). */
  sendTimeoutMs?: number;
  /** Retries before a message is marked failed (default 12: about an hour of backoff). */
  maxAttempts?: number;
  /** Called after each settled send (metrics, tests). */
  onSettled?: (row: OutboxRow, result: SendResult) => void;
  /**
   * Called when a row is settled for good (sent, failed, ambiguous), inside the transaction
   * that settles it, so what depends on the outcome (a delivery's receipt, its fallback) is
   * recorded with it or not at all. May return work to do once that is committed (alerts).
   * Throwing rolls the settlement back, as a failed write would: the row stays `sending`, and
   * the next pass takes it for an interrupted send (ambiguous, not resent).
   */
  onFinal?: (tx: Queryable, row: OutboxRow, outcome: FinalOutcome) => Promise<(() => void) | undefined>;
};

/** Exponential backoff with jitter, capped at 10 minutes. */
export function backoffMs(attempts: number, random: () => number = Math.random): number {
  const base = Math.min(10 * 60_000, 1000 * 2 ** Math.max(0, attempts - 1));
  return Math.round(base * (0.8 + 0.4 * random()));
}

/**
 * Sends what the outbox holds. Per chat, messages go strictly in order, one at a time (an
 * in-process set plus a database advisory lock, so two processes never send to one chat at
 * once). A row is marked `sending` before its request leaves; a row found `sending` by whoever
 * holds the chat's lock was left by a crash and becomes `ambiguous`, never resent.
 */
export class OutboxSender {
  readonly #deps: OutboxSenderDeps;
  readonly #now: () => Date;
  readonly #busy = new Set<string>();
  readonly #inFlight = new Set<Promise<void>>();
  readonly #warnedChannels = new Set<string>();
  #timer: NodeJS.Timeout | null = null;
  #kicked = false;
  #stopped = false;
  /** Timers of retries due later, each kicking when its retry is due. */
  readonly #retries = new Set<NodeJS.Timeout>();

  constructor(deps: OutboxSenderDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? (() => new Date());
  }

  start(): void {
    this.#stopped = false;
    this.#timer ??= setInterval(() => this.kick(), this.#deps.intervalMs ?? 1000);
    this.#timer.unref();
    this.kick();
  }

  /** Looks for something to send soon (coalesced). */
  kick(): void {
    if (this.#kicked || this.#stopped) return;
    this.#kicked = true;
    setImmediate(() => {
      this.#kicked = false;
      this.#track(this.pass());
    });
  }

  /** One look at the outbox: starts a sender for every chat with a due message. */
  async pass(): Promise<void> {
    let chats: Array<{ channel: ChannelName; chatId: string }>;
    try {
      chats = await chatsWithOpenMessages(this.#deps.database, this.#now());
    } catch (error) {
      this.#deps.logger.warn({ err: errorMessage(error) }, 'outbox: could not read pending messages');
      return;
    }
    for (const chat of chats) {
      const key = `${chat.channel}:${chat.chatId}`;
      if (this.#busy.has(key) || this.#stopped) continue;
      this.#busy.add(key);
      this.#track(
        this.#deps.database
          .tryAdvisoryLock(`outbox:${key}`, () => this.#drainChat(chat.channel, chat.chatId))
          .then(() => undefined)
          .catch((error) =>
            this.#deps.logger.error({ err: error, channel: chat.channel }, 'outbox: send pass failed'),
          )
          .finally(() => this.#busy.delete(key)),
      );
    }
  }

  /** Runs passes until nothing due is left and nothing is in flight (one-shot commands, tests). */
  async flush(): Promise<void> {
    for (let round = 0; round < 100; round++) {
      await this.pass();
      if (this.#inFlight.size === 0) return;
      await Promise.allSettled([...this.#inFlight]);
    }
  }

  /** Stops looking for work and waits for sends in flight (each bounded by the send timeout). */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    for (const retry of this.#retries) clearTimeout(retry);
    this.#retries.clear();
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  /**
   * A started sender looks again when a retry is due, instead of at its next interval after
   * that (up to `intervalMs` later). A little late: a timer may fire by the event loop's clock,
   * which can be a few milliseconds behind the one the retry's time was set by.
   */
  #kickWhenDue(delayMs: number): void {
    if (!this.#timer || this.#stopped) return;
    const retry = setTimeout(() => {
      this.#retries.delete(retry);
      this.kick();
    }, delayMs + 20);
    retry.unref();
    this.#retries.add(retry);
  }

  #track(work: Promise<void>): void {
    this.#inFlight.add(work);
    void work.finally(() => this.#inFlight.delete(work));
  }

  async #drainChat(channel: ChannelName, chatId: string): Promise<void> {
    const { database, logger } = this.#deps;
    for (;;) {
      if (this.#stopped) return;
      const row = await firstOpenOfChat(database, channel, chatId);
      if (!row) return;
      if (row.status === 'sending') {
        // We hold the chat's lock, so nobody is sending it: a crash interrupted this send.
        await this.#final(row, {
          status: 'ambiguous',
          error:
            'Steward stopped while this message was being sent; it may or may not have arrived, so it is not resent',
        });
        logger.warn(
          { outboxId: row.id, channel },
          'outbox: a send interrupted by a restart is marked ambiguous',
        );
        continue;
      }
      if (row.nextAttemptAt.getTime() > this.#now().getTime()) return;
      const adapter = this.#deps.adapter(channel);
      if (!adapter) {
        if (!this.#warnedChannels.has(channel)) {
          this.#warnedChannels.add(channel);
          logger.warn({ channel }, 'outbox: messages wait for a channel that is not configured');
        }
        return;
      }
      if (!(await markSending(database, row.id))) continue;
      const result = await this.#send(adapter, row);
      await this.#settle(row, result);
      this.#deps.onSettled?.(row, result);
      if (result.kind === 'retry') return; // later messages of this chat wait for it
    }
  }

  async #send(adapter: ChannelAdapter, row: OutboxRow): Promise<SendResult> {
    try {
      return await adapter.send(
        {
          outboxId: row.id,
          inboundId: row.inboundId,
          chatId: row.chatId,
          text: row.text,
          meta: row.meta,
          audio: row.audio,
        },
        AbortSignal.timeout(this.#deps.sendTimeoutMs ?? 30_000),
      );
    } catch (error) {
      // An adapter must return failures as values; an exception here is a bug, and the request
      // may have left: never resend blindly.
      return { kind: 'ambiguous', error: `send threw: ${errorMessage(error)}` };
    }
  }

  async #settle(row: OutboxRow, result: SendResult): Promise<void> {
    const { database, logger } = this.#deps;
    const attempts = row.attempts + 1;
    const where = { outboxId: row.id, channel: row.channel };
    switch (result.kind) {
      case 'sent':
        await this.#final(row, { status: 'sent', platformMessageId: result.messageId });
        return;
      case 'retry': {
        if (attempts >= (this.#deps.maxAttempts ?? 12)) {
          logger.error({ ...where, error: result.error }, 'outbox: giving up on a message');
          await this.#final(row, {
            status: 'failed',
            error: `gave up after ${attempts} attempts: ${result.error}`,
          });
          return;
        }
        const delay = result.retryAfterMs ?? backoffMs(attempts);
        logger.warn({ ...where, error: result.error, retryInMs: delay }, 'outbox: send failed; will retry');
        await settleOutbound(database, row.id, {
          status: 'pending',
          nextAttemptAt: new Date(this.#now().getTime() + delay),
          error: result.error,
        });
        this.#kickWhenDue(delay);
        return;
      }
      case 'failed':
        logger.error({ ...where, error: result.error }, 'outbox: the platform refused a message');
        await this.#final(row, { status: 'failed', error: result.error });
        return;
      case 'ambiguous':
        logger.warn(
          { ...where, error: result.error },
          'outbox: send outcome unknown; marked ambiguous, not resent',
        );
        await this.#final(row, { status: 'ambiguous', error: result.error });
    }
  }

  /** Settles the row for good, with whatever its outcome decides (`onFinal`) in the same transaction. */
  async #final(row: OutboxRow, outcome: FinalOutcome): Promise<void> {
    const { database, onFinal } = this.#deps;
    if (!onFinal || !row.deliveryId) {
      await settleOutbound(database, row.id, outcome);
      return;
    }
    const after = await database.transaction(async (tx) => {
      await settleOutbound(tx, row.id, outcome);
      return onFinal(tx, row, outcome);
    });
    if (after) {
      try {
        after();
      } catch (error) {
        this.#deps.logger.warn({ err: errorMessage(error) }, 'outbox: follow-up of a settled send failed');
      }
    }
    this.kick(); // a fallback may have queued parts on another chat
  }
}
