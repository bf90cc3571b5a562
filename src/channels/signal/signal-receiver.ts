import { errorMessage } from '../../errors.ts';
import type { Logger } from '../../logging/index.ts';
import { waitUnlessAborted } from '../../time/index.ts';
import { backoffMs, PollLoop } from '../poll-loop.ts';
import { SignalAnswerError, type SignalClient } from './signal-client.ts';

export type SignalReceiverOptions = {
  client: SignalClient;
  /** The bot account's number. */
  number: string;
  logger: Logger;
  /**
   * Stores one received item (an envelope frame). Throws when it could not be stored: it is
   * offered again, in order, until it is stored or the receiver stops.
   */
  handle(item: unknown): Promise<void>;
  /** Seconds signal-cli waits for messages in each `GET /v1/receive` (normal and native modes; default 10). */
  pollSeconds?: number;
};

/**
 * Receives from signal-cli-rest-api in the mode it runs in (`GET /v1/about`): in `json-rpc`
 * mode over the WebSocket at `/v1/receive/{number}` (reconnected when it drops), in `normal`
 * and `native` modes by polling the same path. signal-cli acknowledges a message to Signal
 * when it hands it over, so nothing can be fetched twice on purpose: each item is held and
 * offered to `handle` until it is stored, in arrival order.
 */
export class SignalReceiver extends PollLoop {
  readonly #options: SignalReceiverOptions;
  #socket: WebSocket | null = null;
  /** The REST API's mode, once known. */
  mode: string | null = null;
  /** Items received and not yet stored (for the operator view and tests). */
  pending = 0;

  constructor(options: SignalReceiverOptions) {
    super();
    this.#options = options;
  }

  protected override interrupt(): void {
    this.#socket?.close();
  }

  override async stop(): Promise<void> {
    await super.stop();
    if (this.pending > 0) {
      this.#options.logger.warn(
        { channel: 'signal', pending: this.pending },
        'signal: stopped with received messages not yet stored (the database was unreachable); they are lost',
      );
    }
  }

  protected override async poll(signal: AbortSignal): Promise<void> {
    const { client, logger } = this.#options;
    if (!this.mode) {
      const about = await client.request<{ mode?: unknown }>('GET', '/v1/about', {
        signal: AbortSignal.any([signal, AbortSignal.timeout(15_000)]),
      });
      this.mode = typeof about?.mode === 'string' ? about.mode : 'normal';
      logger.info({ channel: 'signal', mode: this.mode }, 'signal: receiving');
    }
    if (this.mode === 'json-rpc') await this.#listen();
    else await this.#poll(signal);
  }

  protected override failed(error: unknown, failures: number): number {
    const delay =
      error instanceof SignalAnswerError && error.retryAfterSeconds
        ? error.retryAfterSeconds * 1000
        : backoffMs(failures, 1000);
    this.#options.logger.warn(
      { channel: 'signal', err: errorMessage(error), retryInMs: delay },
      'signal: receiving failed; check SIGNAL_CLI_URL and that signal-cli-rest-api runs with SIGNAL_NUMBER registered',
    );
    return delay;
  }

  /** One `GET /v1/receive/{number}`; its items stored in order before the next. */
  async #poll(signal: AbortSignal): Promise<void> {
    const { client, number } = this.#options;
    const seconds = this.#options.pollSeconds ?? 10;
    const items = await client.request<unknown>('GET', `/v1/receive/${encodeURIComponent(number)}`, {
      query: {
        timeout: String(seconds),
        ignore_stories: 'true',
        ignore_avatars: 'true',
        ignore_stickers: 'true',
      },
      signal: AbortSignal.any([signal, AbortSignal.timeout((seconds + 60) * 1000)]),
    });
    if (!Array.isArray(items)) throw new Error('GET /v1/receive answered something that is not a list');
    for (const item of items) await this.#store(item);
  }

  /** The json-rpc WebSocket until it closes; frames stored one after another, in order. */
  async #listen(): Promise<void> {
    const { client, number, logger } = this.#options;
    const url = `${client.base.replace(/^http/, 'ws')}/v1/receive/${encodeURIComponent(number)}`;
    const socket = new WebSocket(
      url,
      client.authorization ? { headers: { authorization: client.authorization } } : {},
    );
    this.#socket = socket;
    let chain = Promise.resolve();
    let opened = false;
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('open', () => {
        opened = true;
      });
      socket.addEventListener('message', (event) => {
        let item: unknown;
        try {
          item = JSON.parse(String(event.data));
        } catch {
          logger.warn({ channel: 'signal' }, 'signal: dropped a WebSocket frame that is not JSON');
          return;
        }
        this.pending++;
        chain = chain.then(() => this.#store(item, true));
      });
      socket.addEventListener('error', () => undefined);
      socket.addEventListener('close', (event) => {
        this.#socket = null;
        if (opened || this.stopping.aborted) resolve();
        else
          reject(
            new Error(
              `the WebSocket ${url.replace(/\/v1\/.*/, '/v1/receive/…')} closed before opening (code ${event.code})`,
            ),
          );
      });
    });
    await chain;
    if (!this.stopping.aborted) await waitUnlessAborted(500, this.stopping);
  }

  async #store(item: unknown, counted = false): Promise<void> {
    if (!counted) this.pending++;
    const stop = this.stopping;
    for (let failures = 1; !stop.aborted; failures++) {
      try {
        await this.#options.handle(item);
        this.pending--;
        return;
      } catch (error) {
        this.#options.logger.warn(
          { channel: 'signal', err: errorMessage(error) },
          'signal: could not store a received message; holding it and trying again',
        );
        await waitUnlessAborted(backoffMs(failures, 1000), stop);
      }
    }
  }
}
