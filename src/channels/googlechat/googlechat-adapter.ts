import { Hono } from 'hono';
import { createRemoteJWKSet, errors as joseErrors, jwtVerify } from 'jose';
import type { ChannelsConfig } from '../../config/index.ts';
import { errorMessage, StewardError } from '../../errors.ts';
import type { Logger } from '../../logging/index.ts';
import { type MarkdownRenderer, renderMarkdown } from '../markdown.ts';
import { unreachable } from '../probe.ts';
import { httpFailure, networkFailure, retryAfterSeconds } from '../send-errors.ts';
import type {
  ChannelAdapter,
  ChannelProbe,
  GatewayPort,
  InboundMessage,
  OutboundMessage,
  SendResult,
  WebhookGuard,
} from '../types.ts';
import { type ChatMessageEvent, parseChatEvent } from './chat-event.ts';
import { ServiceAccountTokens } from './service-account-token.ts';

export const GOOGLE_CHAT_ISSUER = 'chat@system.gserviceaccount.com';
export const GOOGLE_CHAT_MAX_LENGTH = 4096;
/** Google Chat waits about 30 s for an HTTP app's answer; Steward answers within 25. */
export const SYNC_REPLY_MS = 25_000;
export const WORKING_ON_IT = "Working on it… I'll post the answer here.";

const CHAT_MARKUP: MarkdownRenderer = {
  escape: (text) => text,
  codeBlock: (code) => `\`\`\`\n${code}\n\`\`\``,
  inlineCode: (code) => `\`${code}\``,
  bold: (inner) => `*${inner}*`,
  italic: (inner) => `_${inner}_`,
  strike: (inner) => `~${inner}~`,
  link: (label, url) => `<${url}|${label.replaceAll('|', '¦')}>`,
  heading: (inner) => `*${inner}*`,
  bullet: '•',
};

type Waiter = { resolve(text: string): void; settled: boolean };

export type GoogleChatOptions = {
  projectNumber: string;
  jwksUrl: string;
  apiUrl: string;
  serviceAccountPath?: string;
  logger: Logger;
  syncReplyMs?: number;
  fetch?: typeof fetch;
};

/**
 * Google Chat as an HTTP endpoint app: each request's bearer JWT verified against Google's
 * keys (issuer chat@system.gserviceaccount.com, audience the project number). A reply ready
 * within 25 s travels in the response; otherwise the response says it is working on it and
 * the answer is posted later with `spaces.messages.create` as the service account.
 */
export class GoogleChatAdapter implements ChannelAdapter {
  readonly name = 'googlechat' as const;
  readonly capabilities = { maxLength: GOOGLE_CHAT_MAX_LENGTH };
  readonly #options: GoogleChatOptions;
  readonly #jwks: ReturnType<typeof createRemoteJWKSet>;
  readonly #tokens: ServiceAccountTokens | null;
  readonly #fetch: typeof fetch;
  /** Requests still open, by inbound message id: the first reply part goes into the response. */
  readonly #waiters = new Map<number, Waiter>();

  #syncReplyMs: number;

  constructor(options: GoogleChatOptions) {
    this.#options = options;
    this.#syncReplyMs = options.syncReplyMs ?? SYNC_REPLY_MS;
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#jwks = createRemoteJWKSet(new URL(options.jwksUrl));
    this.#tokens = options.serviceAccountPath
      ? new ServiceAccountTokens({
          path: options.serviceAccountPath,
          scope: 'https://www.googleapis.com/auth/chat.bot',
          fetch: this.#fetch,
        })
      : null;
  }

  /** How long a request waits for its reply before answering "working on it". */
  setSyncReplyMs(ms: number): void {
    this.#syncReplyMs = ms;
  }

  /**
   * With a service account: an access token for it (proves the key and Google's token endpoint).
   * Without: Google's signing keys, which every incoming event is checked against.
   */
  async probe(signal: AbortSignal): Promise<ChannelProbe> {
    if (this.#tokens) {
      try {
        await this.#tokens.token(signal);
        return { ok: true, detail: 'the service account got an access token for the Chat API' };
      } catch (error) {
        if (error instanceof StewardError) {
          return {
            ok: false,
            problem: error.message,
            fix: 'set GOOGLE_CHAT_SERVICE_ACCOUNT to a JSON key of a service account that may use the Chat API',
          };
        }
        return unreachable("Google's token endpoint", 'the key file’s token_uri', error, 'the key file');
      }
    }
    try {
      const response = await this.#fetch(this.#options.jwksUrl, { signal });
      if (response.ok) return { ok: true, detail: "Google's signing keys for incoming events load" };
      return {
        ok: false,
        problem: `${this.#options.jwksUrl} answered HTTP ${response.status}`,
        fix: 'check GOOGLE_CHAT_JWKS_URL (unset, it is Google’s)',
      };
    } catch (error) {
      return unreachable(
        "Google's signing keys",
        this.#options.jwksUrl,
        error,
        'GOOGLE_CHAT_JWKS_URL (if set)',
      );
    }
  }

  problems(): string[] {
    return this.#options.serviceAccountPath
      ? []
      : [
          'GOOGLE_CHAT_SERVICE_ACCOUNT is not set: answers that take longer than 25 s, and deliveries, cannot be posted; set it to a service-account JSON key file',
        ];
  }

  directChatId(): string | null {
    return null; // a DM space is only known once the person wrote to Steward
  }

  format(markdown: string): string {
    return renderMarkdown(markdown, CHAT_MARKUP);
  }

  /** A MESSAGE event (checked by `parseChatEvent`) as an InboundMessage, or null for bots and events without a space. */
  normalize(event: ChatMessageEvent): InboundMessage | null {
    const message = event.message;
    const space = message.space ?? event.space;
    if (!space || message.sender.type === 'BOT') return null;
    const direct =
      space.type === 'DM' || space.spaceType === 'DIRECT_MESSAGE' || space.singleUserBotDm === true;
    const text = (message.argumentText ?? message.text ?? '').trim();
    return {
      channel: 'googlechat',
      channelMessageId: message.name,
      chatId: space.name,
      senderId: message.sender.name,
      senderName: message.sender.displayName ?? null,
      kind: text.startsWith('/') ? 'command' : 'text',
      text,
      meta: direct ? {} : { group: true, ...(message.thread?.name ? { threadId: message.thread.name } : {}) },
    };
  }

  async #verify(headers: Headers): Promise<'verified' | { refused: string }> {
    const match = /^Bearer\s+(\S+)$/i.exec(headers.get('authorization') ?? '');
    if (!match) return { refused: 'missing bearer token' };
    try {
      await jwtVerify(match[1]!, this.#jwks, {
        issuer: GOOGLE_CHAT_ISSUER,
        audience: this.#options.projectNumber,
        algorithms: ['RS256'],
      });
      return 'verified';
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) return { refused: 'expired token' };
      if (error instanceof joseErrors.JOSEError) return { refused: `bad token: ${error.code}` };
      throw error; // the key server is unreachable: 503, Google retries
    }
  }

  routes(gateway: GatewayPort, guard: WebhookGuard): Hono {
    const app = new Hono();
    app.post(
      '/googlechat',
      guard('googlechat', { headers: (headers) => this.#verify(headers) }, async ({ json }) => {
        const event = parseChatEvent(json);
        // Acknowledged either way: Chat shows the user an error for a request that failed.
        if ('problem' in event) return { status: 200, json: {}, dropped: event.problem };
        const message = 'event' in event ? this.normalize(event.event) : null;
        if (!message) return { status: 200, json: {} };
        const stored = await gateway.receive(message);
        if (stored.duplicate) return { status: 200, json: {} };
        const text = await this.#awaitReply(stored.id);
        return { status: 200, json: { text: text ?? WORKING_ON_IT } };
      }),
    );
    return app;
  }

  /** The first reply part, if it is ready within the sync window; null after it. */
  #awaitReply(inboundId: number): Promise<string | null> {
    return new Promise((resolve) => {
      const waiter: Waiter = {
        settled: false,
        resolve: (text) => {
          waiter.settled = true;
          clearTimeout(timer);
          this.#waiters.delete(inboundId);
          resolve(text);
        },
      };
      const timer = setTimeout(() => {
        waiter.settled = true;
        this.#waiters.delete(inboundId);
        resolve(null);
      }, this.#syncReplyMs);
      this.#waiters.set(inboundId, waiter);
    });
  }

  async send(message: OutboundMessage, signal: AbortSignal): Promise<SendResult> {
    const waiter = message.inboundId !== null ? this.#waiters.get(message.inboundId) : undefined;
    if (waiter && !waiter.settled) {
      waiter.resolve(this.format(message.text));
      return { kind: 'sent', messageId: null }; // it travels in the webhook's own response
    }
    if (!this.#tokens) {
      return {
        kind: 'failed',
        error: 'GOOGLE_CHAT_SERVICE_ACCOUNT is not set: a reply after the request cannot be posted',
      };
    }
    let token: string;
    try {
      token = await this.#tokens.token(signal);
    } catch (error) {
      // Asking for a token posts nothing: unless the key is refused, the message can go later.
      if (error instanceof StewardError && error.code !== 'service_account_token_unavailable') {
        return { kind: 'failed', error: error.message };
      }
      return { kind: 'retry', error: `google token: ${errorMessage(error)}` };
    }
    const url = new URL(`${this.#options.apiUrl.replace(/\/+$/, '')}/v1/${message.chatId}/messages`);
    if (message.meta.threadId)
      url.searchParams.set('messageReplyOption', 'REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD');
    let response: Response;
    try {
      response = await this.#fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          text: this.format(message.text),
          ...(message.meta.threadId ? { thread: { name: message.meta.threadId } } : {}),
        }),
        signal,
      });
    } catch (error) {
      return networkFailure(error, 'google chat spaces.messages.create');
    }
    const body = (await response.json().catch(() => null)) as {
      name?: string;
      error?: { message?: string };
    } | null;
    if (response.ok) {
      return body?.name
        ? { kind: 'sent', messageId: body.name }
        : { kind: 'ambiguous', error: 'Chat API answered without a message name' };
    }
    return httpFailure(
      response.status,
      body?.error?.message ?? errorMessage(response.statusText),
      retryAfterSeconds(response.headers.get('retry-after')),
    );
  }
}

/** Builds the adapter from `channels.googlechat`, or null without a project number. */
export function googleChatFromConfig(channels: ChannelsConfig, logger: Logger): GoogleChatAdapter | null {
  const { googlechat } = channels;
  if (!googlechat.project_number) return null;
  return new GoogleChatAdapter({
    projectNumber: googlechat.project_number,
    jwksUrl: googlechat.jwks_url,
    apiUrl: googlechat.api_url,
    serviceAccountPath: googlechat.service_account,
    logger,
  });
}
