import {
  LogLevel,
  WebAPIHTTPError,
  WebAPIPlatformError,
  WebAPIRateLimitedError,
  WebAPIRequestError,
  WebClient,
} from '@slack/web-api';
import { Hono } from 'hono';
import type { ChannelsConfig } from '../../config/index.ts';
import { errorMessage } from '../../errors.ts';
import type { Logger } from '../../logging/index.ts';
import { unreachable } from '../probe.ts';
import { httpFailure, networkFailure } from '../send-errors.ts';
import type {
  ChannelAdapter,
  ChannelProbe,
  GatewayPort,
  InboundMessage,
  OutboundMessage,
  SendResult,
  WebhookGuard,
} from '../types.ts';
import { parseSlackRequest, type SlackEnvelope, type SlackMessageEvent } from './slack-event.ts';
import { slackMrkdwn } from './slack-mrkdwn.ts';
import { slackHeaderProblem, slackSignatureMatches } from './slack-signature.ts';

/** Slack truncates very long messages and recommends at most 4,000 characters. */
export const SLACK_MAX_LENGTH = 4000;

/** Platform errors that mean "try again later" rather than "this will never work". */
const TRANSIENT = new Set([
  'ratelimited',
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
]);

/** Slack's error codes (`channel_not_found`, `not_in_channel`…). */
const SLACK_ERROR_CODE = /^[a-z0-9_.]{1,100}$/;

export type SlackOptions = {
  botToken: string;
  signingSecret: string;
  apiUrl: string;
  logger: Logger;
  now?: () => Date;
  fetch?: typeof fetch;
};

/**
 * Slack's Events API: every request signed (v0, five-minute window), `url_verification`
 * answered, the bot's own messages and edits ignored; DMs and mentions answered with
 * `chat.postMessage` — in the message's thread in channels, unthreaded in DMs.
 */
export class SlackAdapter implements ChannelAdapter {
  readonly name = 'slack' as const;
  readonly capabilities = { maxLength: SLACK_MAX_LENGTH };
  readonly client: WebClient;
  readonly #options: SlackOptions;
  #botUserId: string | null = null;

  constructor(options: SlackOptions) {
    this.#options = options;
    const slackLogger = {
      debug: () => {},
      info: () => {},
      warn: () => {},
      error: (...messages: unknown[]) =>
        options.logger.debug({ channel: 'slack', detail: messages.map(String).join(' ') }, 'slack client'),
      setLevel: () => {},
      getLevel: () => LogLevel.ERROR,
      setName: () => {},
    };
    this.client = new WebClient(options.botToken, {
      slackApiUrl: options.apiUrl.endsWith('/') ? options.apiUrl : `${options.apiUrl}/`,
      retryConfig: { retries: 0 }, // the outbox retries, honouring retry_after
      rejectRateLimitedCalls: true,
      timeout: 30_000,
      logger: slackLogger,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
  }

  format(markdown: string): string {
    return slackMrkdwn(markdown);
  }

  /** auth.test: the token is valid, and for which bot and workspace. */
  async probe(): Promise<ChannelProbe> {
    try {
      const auth = await this.client.auth.test();
      return {
        ok: true,
        detail: `the bot ${auth.user ?? auth.user_id} in ${auth.team ?? auth.team_id} answers auth.test`,
      };
    } catch (error) {
      if (
        error instanceof Error &&
        (error as Partial<WebAPIPlatformError>).code === 'slack_webapi_platform_error'
      ) {
        return {
          ok: false,
          problem: `Slack refused auth.test: ${(error as WebAPIPlatformError).data.error}`,
          fix: 'set SLACK_BOT_TOKEN to the Bot User OAuth Token (xoxb-…, on the app’s OAuth & Permissions page)',
        };
      }
      return unreachable('the Slack Web API', this.#options.apiUrl, error, 'SLACK_API_URL (if set)');
    }
  }

  async start(): Promise<void> {
    try {
      const auth = await this.client.auth.test();
      this.#botUserId = auth.user_id ?? null;
    } catch (error) {
      this.#options.logger.warn(
        { channel: 'slack', err: errorMessage(error) },
        'slack: auth.test failed; check SLACK_BOT_TOKEN',
      );
    }
  }

  /** A message or mention (checked by `parseSlackRequest`) as an InboundMessage, or null for what Steward does not answer. */
  normalize(envelope: SlackEnvelope, event: SlackMessageEvent): InboundMessage | null {
    if (!event.user) return null;
    const botUser = this.#botUserId ?? envelope.authorizations?.[0]?.user_id ?? null;
    if (event.bot_id || event.subtype || event.user === botUser) return null;
    const direct = event.type === 'message' && event.channel_type === 'im';
    if (!direct && event.type !== 'app_mention') return null;
    const text = (event.text ?? '')
      .replace(/<@[A-Z0-9]+>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim();
    return {
      channel: 'slack',
      // Mentions also arrive as message events in some setups; the message's ts joins them.
      channelMessageId: `${event.channel}:${event.ts}`,
      chatId: event.channel,
      senderId: event.user,
      kind: text.startsWith('/') ? 'command' : 'text',
      text: text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&'),
      meta: direct ? {} : { group: true, threadId: event.thread_ts ?? event.ts },
    };
  }

  routes(gateway: GatewayPort, guard: WebhookGuard): Hono {
    const app = new Hono();
    const now = this.#options.now ?? (() => new Date());
    const secret = this.#options.signingSecret;
    app.post(
      '/slack/events',
      guard(
        'slack',
        {
          headers: async (headers) => {
            const problem = slackHeaderProblem(headers, now());
            return problem ? { refused: problem } : 'signed';
          },
          body: (headers, body) =>
            slackSignatureMatches(secret, headers, body) ? null : { refused: 'bad signature' },
        },
        async ({ json }) => {
          const request = parseSlackRequest(json);
          if ('challenge' in request) return { status: 200, json: { challenge: request.challenge } };
          // Acknowledged either way: Slack retries a request it got an error for.
          if ('problem' in request) return { status: 200, empty: true, dropped: request.problem };
          const message = 'event' in request ? this.normalize(request.envelope, request.event) : null;
          if (message) await gateway.receive(message);
          return { status: 200, empty: true };
        },
      ),
    );
    return app;
  }

  async send(message: OutboundMessage): Promise<SendResult> {
    try {
      const result = await this.client.chat.postMessage({
        channel: message.chatId,
        text: this.format(message.text),
        mrkdwn: true,
        ...(message.meta.threadId ? { thread_ts: message.meta.threadId } : {}),
      });
      return result.ts
        ? { kind: 'sent', messageId: result.ts }
        : { kind: 'ambiguous', error: 'chat.postMessage answered ok without a ts' };
    } catch (error) {
      if (error instanceof WebAPIRateLimitedError) return httpFailure(429, 'rate limited', error.retryAfter);
      if (error instanceof WebAPIPlatformError) {
        const code = error.data.error;
        // The client puts a 200 body it cannot parse here: not Slack's answer, so not a refusal.
        if (typeof code !== 'string' || !SLACK_ERROR_CODE.test(code)) {
          return {
            kind: 'ambiguous',
            error: 'slack chat.postMessage answered HTTP 200 with a body that is not Slack JSON',
          };
        }
        return TRANSIENT.has(code)
          ? { kind: 'retry', error: `slack: ${code}` }
          : { kind: 'failed', error: `slack: ${code}` };
      }
      if (error instanceof WebAPIHTTPError) return httpFailure(error.statusCode, error.statusMessage);
      if (error instanceof WebAPIRequestError)
        return networkFailure(error.original, 'slack chat.postMessage');
      return networkFailure(error, 'slack chat.postMessage');
    }
  }
}

/** Builds the adapter from `channels.slack`, or null unless both the token and the signing secret are set. */
export function slackFromConfig(channels: ChannelsConfig, logger: Logger): SlackAdapter | null {
  const { slack } = channels;
  if (!slack.bot_token || !slack.signing_secret) return null;
  return new SlackAdapter({
    botToken: slack.bot_token,
    signingSecret: slack.signing_secret,
    apiUrl: slack.api_url,
    logger,
  });
}
