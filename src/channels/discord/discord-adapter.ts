import { DiscordAPIError, HTTPError, RateLimitError, REST } from '@discordjs/rest';
import { WebSocketManager, WebSocketShardEvents } from '@discordjs/ws';
import type { ChannelsConfig } from '../../config/index.ts';
import { errorMessage } from '../../errors.ts';
import type { Logger } from '../../logging/index.ts';
import { waitUnlessAborted } from '../../time/index.ts';
import type { CursorStore } from '../cursor-store.ts';
import { unreachable } from '../probe.ts';
import { httpFailure, networkFailure } from '../send-errors.ts';
import type { ChannelAdapter, ChannelProbe, GatewayPort, OutboundMessage, SendResult } from '../types.ts';
import { type DiscordMessage, parseDiscordDispatch } from './discord-event.ts';
import { discordMarkdown } from './discord-markdown.ts';
import { GatewaySession } from './gateway-session.ts';
import { normalizeDiscordMessage } from './normalize-message.ts';

/** Discord refuses messages over 2,000 characters. */
export const DISCORD_MAX_LENGTH = 2000;

/** GUILD_MESSAGES | DIRECT_MESSAGES | MESSAGE_CONTENT (the last is privileged: turn it on for the bot). */
export const DISCORD_INTENTS = (1 << 9) | (1 << 12) | (1 << 15);

/** What `GET /gateway/bot` answers (the part Steward and @discordjs/ws read). */
type GatewayBotInfo = {
  url: string;
  shards: number;
  session_start_limit: { total: number; remaining: number; reset_after: number; max_concurrency: number };
};

export type DiscordOptions = {
  botToken: string;
  /** The REST API with its version (`https://discord.com/api/v10`). */
  apiUrl: string;
  /** Replaces the URL `GET /gateway/bot` gives. */
  gatewayUrl?: string;
  /** Where the Gateway session is kept between runs. */
  cursors: CursorStore;
  logger: Logger;
  /** How long a REST call may take before its outcome is unknown (default 30 s). */
  requestTimeoutMs?: number;
};

/** The bot's user id is the token's first part, base64-encoded (READY confirms it). */
function userIdOfToken(token: string): string | null {
  try {
    const id = Buffer.from(token.split('.')[0] ?? '', 'base64').toString('utf8');
    return /^\d{15,22}$/.test(id) ? id : null;
  } catch {
    return null;
  }
}

/**
 * Discord through its Gateway (@discordjs/ws: identify, heartbeats at the interval the server
 * gives, resume after a disconnect, reconnect on op 7 or an invalid session) and its REST API
 * (@discordjs/rest). Gateway events are not signed: they arrive over the connection the bot
 * opened with its token, which is what authenticates them. Events are handled one at a time in
 * order; a message is stored before its sequence counts as handled (GatewaySession), so a
 * resume replays what was not stored, and a replayed message is dropped by its id.
 */
export class DiscordAdapter implements ChannelAdapter {
  readonly name = 'discord' as const;
  readonly mode = 'socket' as const;
  readonly capabilities = { typingIndicator: true, maxLength: DISCORD_MAX_LENGTH };
  readonly rest: REST;
  readonly session: GatewaySession;
  readonly #options: DiscordOptions;
  readonly #stopping = new AbortController();
  #manager: WebSocketManager | null = null;
  #events: Promise<void> = Promise.resolve();
  #gatewayInfo: { info: GatewayBotInfo; until: number } | null = null;
  #connecting: Promise<void> | null = null;
  /** Direct-message channels opened for deliveries, by user id. */
  readonly #dmChannels = new Map<string, string>();

  constructor(options: DiscordOptions) {
    this.#options = options;
    this.rest = new REST({
      api: options.apiUrl.replace(/\/+$/, ''),
      // The outbox retries, honouring Retry-After; a timed-out request is never resent here.
      retries: 0,
      rejectOnRateLimit: () => true,
      timeout: options.requestTimeoutMs ?? 30_000,
    }).setToken(options.botToken);
    this.session = new GatewaySession(options.cursors, userIdOfToken(options.botToken));
  }

  /** `GET /users/@me`: the bot token is valid, and whose it is. */
  async probe(signal: AbortSignal): Promise<ChannelProbe> {
    try {
      const me = (await this.rest.get('/users/@me', { signal, versioned: false })) as {
        username?: string;
        id?: string;
      };
      return { ok: true, detail: `the bot ${me.username ?? me.id} answers (GET /users/@me)` };
    } catch (error) {
      if (error instanceof DiscordAPIError) {
        return {
          ok: false,
          problem: `Discord refused GET /users/@me: ${error.status} ${this.#redact(error.message)}`,
          fix: 'set DISCORD_BOT_TOKEN to the bot’s token (Developer Portal → your app → Bot → Reset Token)',
        };
      }
      return unreachable('the Discord API', this.#options.apiUrl, error, 'DISCORD_API_URL (if set)');
    }
  }

  /** `@<user id>`: a DM channel is opened (`POST /users/@me/channels`) when something is sent there. */
  directChatId(senderId: string): string {
    return `@${senderId}`;
  }

  format(markdown: string): string {
    return discordMarkdown(markdown);
  }

  async #gatewayBot(): Promise<GatewayBotInfo> {
    if (this.#gatewayInfo && this.#gatewayInfo.until > Date.now()) return this.#gatewayInfo.info;
    const info = (await this.rest.get('/gateway/bot', { versioned: false })) as GatewayBotInfo;
    const resolved = this.#options.gatewayUrl ? { ...info, url: this.#options.gatewayUrl } : info;
    this.#gatewayInfo = { info: resolved, until: Date.now() + 60_000 };
    return resolved;
  }

  async start(gateway: GatewayPort): Promise<void> {
    this.#connecting ??= this.#connect(gateway);
  }

  /** Connects in the background, retrying until the Gateway answers or Steward stops. */
  async #connect(gateway: GatewayPort): Promise<void> {
    const { logger } = this.#options;
    const stop = this.#stopping.signal;
    for (let failures = 0; !stop.aborted; failures++) {
      try {
        await this.session.load();
        await this.#gatewayBot();
        break;
      } catch (error) {
        const refused = error instanceof DiscordAPIError && error.status === 401;
        if (refused) this.rest.setToken(this.#options.botToken);
        const delay = Math.min(60_000, 1000 * 2 ** Math.min(failures, 6));
        logger.error(
          { channel: 'discord', err: this.#redact(errorMessage(error)), retryInMs: delay },
          refused
            ? 'discord: the bot token was refused; check DISCORD_BOT_TOKEN'
            : 'discord: could not reach the API for the Gateway URL; retrying',
        );
        await waitUnlessAborted(delay, stop);
      }
    }
    if (stop.aborted) return;
    const adapter = this;
    const manager = new (class extends WebSocketManager {
      override fetchGatewayInformation(): ReturnType<WebSocketManager['fetchGatewayInformation']> {
        // The library's type is discord-api-types' APIGatewayBotInfo, of which these are the fields.
        return adapter.#gatewayBot() as unknown as ReturnType<WebSocketManager['fetchGatewayInformation']>;
      }
    })({
      token: this.#options.botToken,
      intents: DISCORD_INTENTS,
      rest: this.rest,
      shardCount: 1,
      retrieveSessionInfo: () => this.session.retrieve(),
      updateSessionInfo: (_shardId, info) => this.session.update(info),
    });
    manager.on(WebSocketShardEvents.Dispatch, (payload) => {
      this.#events = this.#events.then(() => this.#handle(gateway, payload.t, payload.d, payload.s));
    });
    manager.on(WebSocketShardEvents.Ready, () =>
      logger.info({ channel: 'discord' }, 'discord: connected to the Gateway'),
    );
    manager.on(WebSocketShardEvents.Resumed, () =>
      logger.info({ channel: 'discord' }, 'discord: resumed the Gateway session'),
    );
    manager.on(WebSocketShardEvents.Error, (error) =>
      logger.error({ channel: 'discord', err: this.#redact(errorMessage(error)) }, 'discord: Gateway error'),
    );
    this.#manager = manager;
    // Not awaited: it settles only at READY, and the library keeps reconnecting until then.
    manager
      .connect()
      .catch((error: unknown) =>
        logger.error(
          { channel: 'discord', err: this.#redact(errorMessage(error)) },
          'discord: could not open the Gateway connection',
        ),
      );
  }

  /**
   * One dispatch, in order. A message is stored before its sequence counts as handled; while
   * the database is down the same event is tried again (later events wait behind it).
   */
  async #handle(gateway: GatewayPort, event: string, data: unknown, sequence: number): Promise<void> {
    const { logger } = this.#options;
    const parsed = parseDiscordDispatch(event, data);
    if ('problem' in parsed) {
      logger.warn(
        { channel: 'discord', event, problem: parsed.problem },
        'discord: dropped an event Steward cannot use',
      );
    } else if ('ready' in parsed) {
      this.session.botUserId = parsed.ready.botUserId;
    } else if ('message' in parsed) {
      await this.#store(gateway, parsed.message);
    }
    const stored = 'message' in parsed;
    for (let failures = 0; !this.#stopping.signal.aborted; failures++) {
      try {
        await this.session.handled(sequence, stored);
        return;
      } catch (error) {
        logger.warn({ channel: 'discord', err: errorMessage(error) }, 'discord: could not save the session');
        if (!stored) return; // saved with the next message
        await waitUnlessAborted(Math.min(30_000, 500 * 2 ** Math.min(failures, 6)), this.#stopping.signal);
      }
    }
  }

  async #store(gateway: GatewayPort, message: DiscordMessage): Promise<void> {
    const inbound = normalizeDiscordMessage(message, this.session.botUserId);
    if (!inbound) return;
    for (let failures = 0; !this.#stopping.signal.aborted; failures++) {
      try {
        await gateway.receive(inbound);
        return;
      } catch (error) {
        const delay = Math.min(30_000, 500 * 2 ** Math.min(failures, 6));
        this.#options.logger.warn(
          { channel: 'discord', err: errorMessage(error), retryInMs: delay },
          'discord: could not store a message; trying again',
        );
        await waitUnlessAborted(delay, this.#stopping.signal);
      }
    }
  }

  /** Closes the connection so that the session can be resumed, after the events received are handled. */
  async stop(): Promise<void> {
    this.session.keepOnClose = true;
    const manager = this.#manager;
    this.#manager = null;
    // 4000, not 1000: Discord keeps a session closed this way resumable.
    await Promise.resolve(manager?.destroy({ code: 4000, reason: 'Steward is stopping' })).catch(
      () => undefined,
    );
    await Promise.race([this.#events, new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
    this.#stopping.abort();
    // A `GET /gateway/bot` in flight ends by its own timeout; stopping does not wait that long.
    await Promise.race([this.#connecting, new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
  }

  async typing(chatId: string): Promise<void> {
    const channelId = await this.#channelOf(chatId, AbortSignal.timeout(5_000));
    await this.rest.post(`/channels/${channelId}/typing`, {
      versioned: false,
      signal: AbortSignal.timeout(5_000),
    });
  }

  /** The channel to post in: the chat itself, or the DM channel of `@<user id>` (opened once). */
  async #channelOf(chatId: string, signal: AbortSignal): Promise<string> {
    if (!chatId.startsWith('@')) return chatId;
    const userId = chatId.slice(1);
    const known = this.#dmChannels.get(userId);
    if (known) return known;
    const channel = (await this.rest.post('/users/@me/channels', {
      versioned: false,
      body: { recipient_id: userId },
      signal,
    })) as { id: string };
    this.#dmChannels.set(userId, channel.id);
    return channel.id;
  }

  async send(message: OutboundMessage, signal: AbortSignal): Promise<SendResult> {
    let channelId: string;
    try {
      channelId = await this.#channelOf(message.chatId, signal);
    } catch (error) {
      // Opening a DM creates nothing visible: safe to try again when its outcome is unknown.
      const result = this.#failure(error, 'discord create DM');
      return result.kind === 'ambiguous' ? { kind: 'retry', error: result.error } : result;
    }
    try {
      const sent = (await this.rest.post(`/channels/${channelId}/messages`, {
        versioned: false,
        signal,
        body: {
          content: this.format(message.text),
          // Nobody is pinged by what the model wrote (@everyone, roles, users).
          allowed_mentions: { parse: [] },
          ...(message.meta.replyToMessageId
            ? { message_reference: { message_id: message.meta.replyToMessageId, fail_if_not_exists: false } }
            : {}),
        },
      })) as { id?: unknown } | null;
      return typeof sent?.id === 'string'
        ? { kind: 'sent', messageId: sent.id }
        : { kind: 'ambiguous', error: 'discord create message answered without a message id' };
    } catch (error) {
      return this.#failure(error, 'discord create message');
    }
  }

  /**
   * A failed call as a SendResult: a rate limit is retried after Discord's reset, 5xx answers
   * retried, other refusals final; a request with no answer is of unknown outcome.
   */
  #failure(error: unknown, what: string): SendResult {
    if (error instanceof RateLimitError) {
      return {
        kind: 'retry',
        error: `${what}: rate limited${error.global ? ' (global)' : ''}`,
        retryAfterMs: Math.max(error.retryAfter, error.timeToReset, 1000),
      };
    }
    if (error instanceof DiscordAPIError) {
      // The client forgets its token on a 401; it is set again so that one refusal is not forever.
      if (error.status === 401) this.rest.setToken(this.#options.botToken);
      return httpFailure(error.status, this.#redact(`${what}: ${error.code} ${error.message}`));
    }
    if (error instanceof HTTPError) return httpFailure(error.status, `${what}: ${error.message}`);
    const result = networkFailure(error, what);
    return 'error' in result ? { ...result, error: this.#redact(result.error) } : result;
  }

  #redact(text: string): string {
    return text.replaceAll(this.#options.botToken, '<bot token>');
  }
}

/** Builds the adapter from `channels.discord`, or null when no bot token is set. */
export function discordFromConfig(
  channels: ChannelsConfig,
  logger: Logger,
  cursors: CursorStore,
): DiscordAdapter | null {
  const { discord } = channels;
  if (!discord.bot_token) return null;
  return new DiscordAdapter({
    botToken: discord.bot_token,
    apiUrl: discord.api_url,
    gatewayUrl: discord.gateway_url,
    cursors,
    logger,
  });
}
