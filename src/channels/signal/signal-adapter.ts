import type { ChannelsConfig } from '../../config/index.ts';
import { errorMessage, StewardError } from '../../errors.ts';
import type { Logger } from '../../logging/index.ts';
import { httpFailure, networkFailure } from '../send-errors.ts';
import type { ChannelAdapter, GatewayPort, InboundMedia, OutboundMessage, SendResult } from '../types.ts';
import { SignalAnswerError, SignalClient } from './signal-client.ts';
import { normalizeSignalEnvelope } from './signal-envelope.ts';
import { SignalReceiver } from './signal-receiver.ts';
import { signalStyledText } from './signal-text.ts';

/** Signal shows up to 2,000 characters as one message (longer ones travel as a text attachment). */
export const SIGNAL_MAX_LENGTH = 2000;

export type SignalOptions = {
  cliUrl: string;
  /** The bot account's number, registered (or linked) in signal-cli. */
  number: string;
  logger: Logger;
  pollSeconds?: number;
  fetch?: typeof fetch;
};

/**
 * Signal through the signal-cli REST API the user runs (bbernhard/signal-cli-rest-api):
 * messages received over its WebSocket (json-rpc mode) or by polling (normal, native),
 * stored in order before the next is taken; replies with `POST /v2/send` in Signal's text
 * styles; typing with `PUT /v1/typing-indicator`; voice notes downloaded from
 * `/v1/attachments` and transcribed. Direct messages only.
 */
export class SignalAdapter implements ChannelAdapter {
  readonly name = 'signal' as const;
  readonly mode = 'polling' as const;
  readonly capabilities = { typingIndicator: true, maxLength: SIGNAL_MAX_LENGTH };
  readonly client: SignalClient;
  readonly #options: SignalOptions;
  #receiver: SignalReceiver | null = null;

  constructor(options: SignalOptions) {
    this.#options = options;
    this.client = new SignalClient({ cliUrl: options.cliUrl, fetch: options.fetch });
  }

  get receiver(): SignalReceiver | null {
    return this.#receiver;
  }

  format(markdown: string): string {
    return signalStyledText(markdown);
  }

  async start(gateway: GatewayPort): Promise<void> {
    const { logger } = this.#options;
    this.#receiver = new SignalReceiver({
      client: this.client,
      number: this.#options.number,
      logger,
      pollSeconds: this.#options.pollSeconds,
      handle: async (item) => {
        const received = normalizeSignalEnvelope(item);
        if ('message' in received) await gateway.receive(received.message);
        else if ('problem' in received)
          logger.warn(
            { channel: 'signal', problem: received.problem },
            'signal: dropped a frame Steward cannot use',
          );
        else logger.debug({ channel: 'signal', reason: received.ignored }, 'signal: nothing to answer');
      },
    });
    this.#receiver.start();
  }

  async stop(): Promise<void> {
    await this.#receiver?.stop();
    this.#receiver = null;
  }

  async send(message: OutboundMessage, signal: AbortSignal): Promise<SendResult> {
    try {
      const answer = await this.client.request<{ timestamp?: unknown }>('POST', '/v2/send', {
        body: {
          number: this.#options.number,
          recipients: [message.chatId],
          message: this.format(message.text),
          text_mode: 'styled',
        },
        signal,
      });
      const timestamp = answer?.timestamp;
      return typeof timestamp === 'string' || typeof timestamp === 'number'
        ? { kind: 'sent', messageId: String(timestamp) }
        : { kind: 'ambiguous', error: 'signal-cli accepted the message but gave no timestamp' };
    } catch (error) {
      if (error instanceof SignalAnswerError)
        return httpFailure(error.status, error.message, error.retryAfterSeconds);
      return networkFailure(error, 'signal send');
    }
  }

  async typing(chatId: string): Promise<void> {
    await this.client.request('PUT', `/v1/typing-indicator/${encodeURIComponent(this.#options.number)}`, {
      body: { recipient: chatId },
      signal: AbortSignal.timeout(5_000),
    });
  }

  /** The attachment's bytes from `GET /v1/attachments/{id}` (signal-cli keeps what it received). */
  async fetchMedia(media: InboundMedia, signal: AbortSignal): Promise<Uint8Array> {
    try {
      const response = await this.client.raw('GET', `/v1/attachments/${encodeURIComponent(media.id)}`, {
        signal,
      });
      return new Uint8Array(await response.arrayBuffer());
    } catch (error) {
      throw new StewardError(
        'media_unavailable',
        `signal attachment download failed: ${errorMessage(error)}`,
        {
          cause: error,
        },
      );
    }
  }
}

/** Builds the adapter from `channels.signal`, or null unless both the URL and the number are set. */
export function signalFromConfig(channels: ChannelsConfig, logger: Logger): SignalAdapter | null {
  const { signal } = channels;
  if (!signal.cli_url || !signal.number) return null;
  return new SignalAdapter({ cliUrl: signal.cli_url, number: signal.number, logger });
}
