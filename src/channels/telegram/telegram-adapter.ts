import { timingSafeEqual } from 'node:crypto';
import { Api, GrammyError } from 'grammy';
import { Hono } from 'hono';
import { type ChannelsConfig, stewardCommand } from '../../config/index.ts';
import { errorMessage, StewardError } from '../../errors.ts';
import type { Logger } from '../../logging/index.ts';
import { unreachable } from '../probe.ts';
import type {
  ChannelAdapter,
  ChannelProbe,
  ChatMeta,
  GatewayPort,
  InboundMedia,
  OutboundMessage,
  SendResult,
  WebhookGuard,
} from '../types.ts';
import { botApiFetch } from './bot-api-fetch.ts';
import { grammySignal } from './grammy-signal.ts';
import { LongPoller } from './long-polling.ts';
import { type BotIdentity, normalizeTelegramUpdate } from './normalize-update.ts';
import { telegramHtml } from './telegram-html.ts';
import { sendTelegram } from './telegram-send.ts';
import { parseTelegramUpdate } from './telegram-update.ts';

export const TELEGRAM_MAX_LENGTH = 4096;

export type TelegramOptions = {
  botToken: string;
  webhookSecret?: string;
  apiRoot: string;
  publicUrl?: string;
  logger: Logger;
  pollTimeoutSeconds?: number;
  stallGraceMs?: number;
  fetch?: typeof fetch;
};

function sameSecret(given: string | null, expected: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Telegram through grammy's Bot API client. Webhook mode when a public URL and a webhook
 * secret are set (`setWebhook` at start, every request checked against the secret header);
 * long polling otherwise. Replies are sent by `telegram-send.ts`: HTML, resent as plain text
 * when Telegram cannot parse them.
 */
export class TelegramAdapter implements ChannelAdapter {
  readonly name = 'telegram' as const;
  readonly capabilities = { typingIndicator: true, maxLength: TELEGRAM_MAX_LENGTH, voice: true };
  readonly api: Api;
  readonly #options: TelegramOptions;
  readonly #bot: BotIdentity;
  #poller: LongPoller | null = null;
  webhookError: string | null = null;

  constructor(options: TelegramOptions) {
    this.#options = options;
    // grammy's own timeout is a backstop; each send carries the outbox's shorter signal.
    this.api = new Api(options.botToken, {
      apiRoot: options.apiRoot.replace(/\/+$/, ''),
      timeoutSeconds: 120,
      fetch: botApiFetch(options.fetch),
    });
    this.#bot = { id: Number(options.botToken.split(':')[0]), username: null };
  }

  get mode(): 'webhook' | 'polling' {
    return this.#options.publicUrl && this.#options.webhookSecret ? 'webhook' : 'polling';
  }

  get webhookUrl(): string | null {
    return this.#options.publicUrl
      ? `${this.#options.publicUrl.replace(/\/+$/, '')}/webhooks/telegram`
      : null;
  }

  get poller(): LongPoller | null {
    return this.#poller;
  }

  problems(): string[] {
    const problems: string[] = [];
    if (this.#options.webhookSecret && !this.#options.publicUrl) {
      problems.push(
        'TELEGRAM_WEBHOOK_SECRET is set but STEWARD_PUBLIC_URL is not: Telegram uses long polling; set STEWARD_PUBLIC_URL to receive webhooks',
      );
    }
    if (this.#options.publicUrl && !this.#options.webhookSecret) {
      problems.push(
        'STEWARD_PUBLIC_URL is set but TELEGRAM_WEBHOOK_SECRET is not: Telegram uses long polling; set TELEGRAM_WEBHOOK_SECRET to receive webhooks',
      );
    }
    return problems;
  }

  format(markdown: string): string {
    return telegramHtml(markdown);
  }

  async #identity(): Promise<BotIdentity> {
    if (this.#bot.username) return this.#bot;
    try {
      const me = await this.api.getMe(grammySignal(AbortSignal.timeout(10_000)));
      this.#bot.id = me.id;
      this.#bot.username = me.username;
    } catch (error) {
      this.#options.logger.warn(
        { channel: 'telegram', err: errorMessage(error) },
        'telegram: getMe failed; group mentions are not recognized until it answers',
      );
    }
    return this.#bot;
  }

  /** Stores what the update says; an update Steward cannot use is not thrown on but returned. */
  async #receive(gateway: GatewayPort, payload: unknown): Promise<{ dropped: string } | null> {
    const parsed = parseTelegramUpdate(payload);
    if ('problem' in parsed) return { dropped: parsed.problem };
    const message = normalizeTelegramUpdate(parsed.update, await this.#identity());
    if (message) await gateway.receive(message);
    return null;
  }

  routes(gateway: GatewayPort, guard: WebhookGuard): Hono | null {
    const secret = this.#options.webhookSecret;
    if (this.mode !== 'webhook' || !secret) return null;
    const app = new Hono();
    app.post(
      '/telegram',
      guard(
        'telegram',
        {
          headers: async (headers) =>
            sameSecret(headers.get('x-telegram-bot-api-secret-token'), secret)
              ? 'verified'
              : { refused: 'bad secret token' },
        },
        async ({ json }) => {
          // Acknowledged either way: Telegram would redeliver an update it got an error for.
          const outcome = await this.#receive(gateway, json);
          return { status: 200, empty: true, ...outcome };
        },
      ),
    );
    return app;
  }

  /** Tells Telegram where to send updates, with the secret it must send back. */
  async registerWebhook(signal: AbortSignal): Promise<void> {
    await this.api.setWebhook(
      this.webhookUrl!,
      { secret_token: this.#options.webhookSecret, allowed_updates: ['message'] },
      grammySignal(signal),
    );
  }

  /** getMe proves the token; in webhook mode getWebhookInfo shows where Telegram sends updates. */
  async probe(signal: AbortSignal): Promise<ChannelProbe> {
    const where = this.#options.apiRoot;
    let username: string;
    try {
      username = (await this.api.getMe(grammySignal(signal))).username;
    } catch (error) {
      if (error instanceof GrammyError) {
        return {
          ok: false,
          problem: `Telegram refused getMe: ${error.error_code} ${error.description}`,
          fix: 'set TELEGRAM_BOT_TOKEN to the token @BotFather gave you (/mybots → your bot → API Token)',
        };
      }
      return unreachable('the Telegram Bot API', where, error, 'TELEGRAM_API_ROOT (if set)');
    }
    if (this.mode !== 'webhook') return { ok: true, detail: `@${username} answers getMe` };
    let registered: string;
    try {
      registered = (await this.api.getWebhookInfo(grammySignal(signal))).url ?? '';
    } catch (error) {
      return unreachable('the Telegram Bot API', where, error, 'TELEGRAM_API_ROOT (if set)');
    }
    if (registered !== this.webhookUrl) {
      return {
        ok: false,
        problem: `@${username} answers, but Telegram sends its updates to ${registered || 'no webhook'}, not ${this.webhookUrl}`,
        fix: `${stewardCommand()} doctor --fix registers the webhook (Steward also registers it each time it starts)`,
        repair: {
          what: `registered ${this.webhookUrl} with Telegram`,
          run: (repairSignal) => this.registerWebhook(repairSignal),
        },
      };
    }
    return { ok: true, detail: `@${username} answers getMe; Telegram sends updates to this webhook` };
  }

  async start(gateway: GatewayPort): Promise<void> {
    const { logger } = this.#options;
    await this.#identity();
    if (this.mode === 'webhook') {
      try {
        await this.registerWebhook(AbortSignal.timeout(15_000));
        this.webhookError = null;
        logger.info({ channel: 'telegram', url: this.webhookUrl }, 'telegram: webhook registered');
      } catch (error) {
        this.webhookError = errorMessage(error);
        logger.error(
          { channel: 'telegram', err: this.webhookError },
          'telegram: setWebhook failed; check STEWARD_PUBLIC_URL and TELEGRAM_BOT_TOKEN',
        );
      }
      return;
    }
    this.#poller = new LongPoller({
      api: this.api,
      logger,
      handle: async (update) => {
        const outcome = await this.#receive(gateway, update);
        if (outcome) {
          logger.warn(
            { channel: 'telegram', problem: outcome.dropped },
            'telegram: dropped an update Steward cannot use',
          );
        }
      },
      pollTimeoutSeconds: this.#options.pollTimeoutSeconds,
      stallGraceMs: this.#options.stallGraceMs,
    });
    this.#poller.start();
    logger.info({ channel: 'telegram' }, 'telegram: long polling (no public URL)');
  }

  async stop(): Promise<void> {
    await this.#poller?.stop();
    this.#poller = null;
  }

  async typing(chatId: string, meta: ChatMeta): Promise<void> {
    await this.api.sendChatAction(
      chatId,
      'typing',
      meta.threadId ? { message_thread_id: Number(meta.threadId) } : {},
      grammySignal(AbortSignal.timeout(5_000)),
    );
  }

  /** `getFile`, then the file from `{apiRoot}/file/bot<token>/<file_path>`. */
  async fetchMedia(media: InboundMedia, signal: AbortSignal): Promise<Uint8Array> {
    const { botToken, apiRoot } = this.#options;
    let filePath: string | undefined;
    try {
      filePath = (await this.api.getFile(media.id, grammySignal(signal))).file_path;
    } catch (error) {
      const detail = error instanceof GrammyError ? error.description : errorMessage(error);
      throw new StewardError('media_unavailable', `telegram getFile failed: ${detail}`);
    }
    if (!filePath) throw new StewardError('media_unavailable', 'telegram getFile gave no file_path');
    const url = `${apiRoot.replace(/\/+$/, '')}/file/bot${botToken}/${filePath}`;
    let response: Response;
    try {
      response = await fetch(url, { signal });
    } catch (error) {
      // The URL holds the token: never let it into the message.
      throw new StewardError(
        'media_unavailable',
        `telegram file download failed: ${errorMessage(error).replaceAll(botToken, '***')}`,
      );
    }
    if (!response.ok) {
      throw new StewardError('media_unavailable', `telegram file download answered HTTP ${response.status}`);
    }
    return new Uint8Array(await response.arrayBuffer());
  }

  send(message: OutboundMessage, signal: AbortSignal): Promise<SendResult> {
    return sendTelegram(
      { api: this.api, botToken: this.#options.botToken, logger: this.#options.logger },
      message,
      signal,
    );
  }
}

/** Builds the adapter from `channels.*`, or null when no bot token is set. */
export function telegramFromConfig(
  channels: ChannelsConfig,
  publicUrl: string | undefined,
  logger: Logger,
): TelegramAdapter | null {
  const { telegram } = channels;
  if (!telegram.bot_token) return null;
  return new TelegramAdapter({
    botToken: telegram.bot_token,
    webhookSecret: telegram.webhook_secret,
    apiRoot: telegram.api_root,
    publicUrl,
    logger,
  });
}
