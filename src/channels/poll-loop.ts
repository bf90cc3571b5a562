import { waitUnlessAborted } from '../time/index.ts';

/**
 * A loop that asks a platform for messages until stopped (Telegram getUpdates, Matrix /sync,
 * signal-cli, the IMAP inbox). A failed poll is tried again after a wait that grows with the
 * failures in a row; a poll still running `stallAfterMs` after it began (a connection dead
 * without saying so) is aborted and started again at once. Subclasses say what one poll is.
 */
export abstract class PollLoop {
  /** Polls the watchdog aborted. */
  stalls = 0;
  readonly #stallAfterMs: number | null;
  readonly #stopping = new AbortController();
  #loop: Promise<void> | null = null;
  #failures = 0;

  /** `stallAfterMs`: none, no watchdog (a poll that holds a connection open for as long as it lives). */
  constructor(stallAfterMs: number | null = null) {
    this.#stallAfterMs = stallAfterMs;
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  async stop(): Promise<void> {
    this.#stopping.abort();
    this.interrupt();
    await this.#loop;
  }

  /** Aborted once `stop()` is called. */
  protected get stopping(): AbortSignal {
    return this.#stopping.signal;
  }

  /**
   * One poll, or one connection held until it ends. `signal` aborts when the loop stops or the
   * poll stalls. Throws when it failed: the loop waits, then polls again.
   */
  protected abstract poll(signal: AbortSignal): Promise<void>;

  /**
   * Logs a failed poll and returns the milliseconds to wait before the next; `failures` counts
   * them in a row, from 1. Not called for a poll that failed because the loop stopped or stalled.
   */
  protected abstract failed(error: unknown, failures: number): number;

  /** Called by `stop()` once the signals aborted: closes what no signal reaches (a socket). */
  protected interrupt(): void {}

  /** Logs a stalled poll (already counted in `stalls`). */
  protected stalled(): void {}

  /**
   * The platform answers again (a connection is up): the next failure waits the shortest time.
   * A poll that returns counts as healthy without calling it.
   */
  protected healthy(): void {
    this.#failures = 0;
  }

  async #run(): Promise<void> {
    const stop = this.#stopping.signal;
    while (!stop.aborted) {
      const poll = new AbortController();
      const onStop = () => poll.abort();
      stop.addEventListener('abort', onStop);
      let stalled = false;
      const watchdog =
        this.#stallAfterMs === null
          ? undefined
          : setTimeout(() => {
              stalled = true;
              poll.abort();
            }, this.#stallAfterMs);
      try {
        await this.poll(poll.signal);
        this.#failures = 0;
      } catch (error) {
        if (stop.aborted) break;
        if (stalled) {
          this.stalls++;
          this.stalled();
          continue;
        }
        this.#failures++;
        await waitUnlessAborted(this.failed(error, this.#failures), stop);
      } finally {
        clearTimeout(watchdog);
        stop.removeEventListener('abort', onStop);
      }
    }
  }
}

/** The wait after the `failures`-th failure in a row: `firstMs`, doubling each time, up to a minute. */
export function backoffMs(failures: number, firstMs: number): number {
  return Math.min(60_000, firstMs * 2 ** (failures - 1));
}
