import { createHmac, timingSafeEqual } from 'node:crypto';
import { Hono } from 'hono';
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
  InboundMedia,
  InboundMessage,
  OutboundMessage,
  SendResult,
  WebhookGuard,
} from '../types.ts';
import { parseWhatsAppPayload, type WhatsAppContact, type WhatsAppMessage } from './whatsapp-payload.ts';

export const WHATSAPP_MAX_LENGTH = 4096;

/** Graph error codes that are throttling, not refusal. */
const THROTTLED = new Set([4, 80007, 130429, 131048, 131056]);

const WHATSAPP_MARKUP: MarkdownRenderer = {
  escape: (text) => text,
  codeBlock: (code) => `\`\`\`${code}\`\`\``,
  inlineCode: (code) => `\`${code}\``,
  bold: (inner) => `*${inner}*`,
  italic: (inner) => `_${inner}_`,
  strike: (inner) => `~${inner}~`,
  link: (label, url) => (label === url ? url : `${label} (${url})`),
  heading: (inner) => `*${inner}*`,
  bullet: '•',
};

export function whatsappSignatureMatches(
  appSecret: string,
  header: string | null,
  body: Uint8Array,
): boolean {
  if (!header) return false;
  const expected = Buffer.from(`sha256=${createHmac('sha256', appSecret).update(body).digest('hex')}`);
  const given = Buffer.from(header);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

function sameToken(given: string | null, expected: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export type WhatsAppOptions = {
  accessToken: string;
  appSecret: string;
  verifyToken: string;
  phoneNumberId: string;
  graphUrl: string;
  logger: Logger;
  fetch?: typeof fetch;
};

/**
 * The WhatsApp Cloud API: the subscription handshake (`hub.challenge` for the right verify
 * token), every POST checked against `X-Hub-Signature-256`, status callbacks acknowledged and
 * ignored, replies through `POST {graph}/{phone_number_id}/messages`.
 */
export class WhatsAppAdapter implements ChannelAdapter {
  readonly name = 'whatsapp' as const;
  readonly capabilities = { maxLength: WHATSAPP_MAX_LENGTH, voice: true };
  readonly #options: WhatsAppOptions;
  readonly #fetch: typeof fetch;

  constructor(options: WhatsAppOptions) {
    this.#options = options;
    this.#fetch = options.fetch ?? globalThis.fetch;
  }

  format(markdown: string): string {
    return renderMarkdown(markdown, WHATSAPP_MARKUP);
  }

  /** A message (checked by `parseWhatsAppPayload`) as an InboundMessage; types other than text and audio get a note. */
  normalize(message: WhatsAppMessage, contacts: WhatsAppContact[]): InboundMessage {
    const name = contacts.find((contact) => contact.wa_id === message.from)?.profile?.name ?? null;
    const base = {
      channel: 'whatsapp' as const,
      channelMessageId: message.id,
      chatId: message.from,
      senderId: message.from,
      senderName: name,
      meta: {},
    };
    if (message.type === 'audio' && message.audio) {
      return {
        ...base,
        kind: 'voice',
        text: '',
        media: { id: message.audio.id, mimeType: message.audio.mime_type ?? null },
      };
    }
    const text = message.type === 'text' ? (message.text?.body ?? '').trim() : '';
    return {
      ...base,
      kind: message.type === 'text' ? (text.startsWith('/') ? 'command' : 'text') : 'unsupported',
      text,
    };
  }

  routes(gateway: GatewayPort, guard: WebhookGuard): Hono {
    const app = new Hono();
    const { verifyToken, appSecret } = this.#options;
    app.get(
      '/whatsapp',
      guard(
        'whatsapp',
        {
          refusedStatus: 403,
          headers: async (_headers, url) =>
            url.searchParams.get('hub.mode') === 'subscribe' &&
            sameToken(url.searchParams.get('hub.verify_token'), verifyToken)
              ? 'verified'
              : { refused: 'bad verify token or mode' },
        },
        async ({ url }) => ({ status: 200, text: url.searchParams.get('hub.challenge') ?? '' }),
      ),
    );
    app.post(
      '/whatsapp',
      guard(
        'whatsapp',
        {
          headers: async (headers) =>
            /^sha256=[0-9a-f]{64}$/.test(headers.get('x-hub-signature-256') ?? '')
              ? 'signed'
              : { refused: 'missing signature' },
          body: (headers, body) =>
            whatsappSignatureMatches(appSecret, headers.get('x-hub-signature-256'), body)
              ? null
              : { refused: 'bad signature' },
        },
        async ({ json }) => {
          const { messages, problems } = parseWhatsAppPayload(json);
          for (const { message, contacts } of messages)
            await gateway.receive(this.normalize(message, contacts));
          // Acknowledged either way: WhatsApp redelivers a webhook it got an error for, for days.
          return { status: 200, empty: true, ...(problems.length ? { dropped: problems.join('; ') } : {}) };
        },
      ),
    );
    return app;
  }

  get #graph(): string {
    return this.#options.graphUrl.replace(/\/+$/, '');
  }

  /** Looks the phone number up (`GET {graph}/{phone_number_id}`): proves the token and the id. */
  async probe(signal: AbortSignal): Promise<ChannelProbe> {
    const { phoneNumberId, accessToken } = this.#options;
    let response: Response;
    try {
      response = await this.#fetch(
        `${this.#graph}/${encodeURIComponent(phoneNumberId)}?fields=display_phone_number,verified_name`,
        { headers: { authorization: `Bearer ${accessToken}` }, signal },
      );
    } catch (error) {
      return unreachable('the Graph API', this.#graph, error, 'WHATSAPP_GRAPH_URL (if set)');
    }
    const body = (await response.json().catch(() => ({}))) as {
      display_phone_number?: string;
      verified_name?: string;
      error?: { message?: string; code?: number };
    };
    if (response.ok) {
      const number = [body.display_phone_number, body.verified_name && `(${body.verified_name})`];
      return { ok: true, detail: `the phone number ${number.filter(Boolean).join(' ')} answers` };
    }
    const message = (body.error?.message ?? `HTTP ${response.status}`).replaceAll(accessToken, '<token>');
    const refused = response.status === 401 || body.error?.code === 190;
    return {
      ok: false,
      problem: `the Graph API refused the phone number lookup: ${message}`,
      fix: refused
        ? 'set WHATSAPP_ACCESS_TOKEN to a valid token (a System User token does not expire)'
        : 'check WHATSAPP_PHONE_NUMBER_ID (WhatsApp → API Setup → Phone number ID) and that the token may use it',
    };
  }

  /** `GET {graph}/{media_id}` for the media's URL, then the file from it (both with the token). */
  async fetchMedia(media: InboundMedia, signal: AbortSignal): Promise<Uint8Array> {
    const headers = { authorization: `Bearer ${this.#options.accessToken}` };
    const fail = (detail: string) => new StewardError('media_unavailable', `whatsapp media: ${detail}`);
    let response: Response;
    try {
      response = await this.#fetch(`${this.#graph}/${encodeURIComponent(media.id)}`, { headers, signal });
    } catch (error) {
      throw fail(errorMessage(error));
    }
    const info = (await response.json().catch(() => null)) as {
      url?: string;
      error?: { message?: string };
    } | null;
    if (!response.ok || !info?.url) {
      throw fail(`HTTP ${response.status}: ${info?.error?.message ?? 'no media URL'}`);
    }
    try {
      response = await this.#fetch(info.url, { headers, signal });
    } catch (error) {
      throw fail(errorMessage(error));
    }
    if (!response.ok) throw fail(`download answered HTTP ${response.status}`);
    return new Uint8Array(await response.arrayBuffer());
  }

  async send(message: OutboundMessage, signal: AbortSignal): Promise<SendResult> {
    if (message.audio) {
      const upload = await this.#upload(message.audio, signal);
      if ('id' in upload) {
        return this.#post({ type: 'audio', audio: { id: upload.id } }, message.chatId, signal);
      }
      // A refused upload (a format WhatsApp does not take) gets the text instead.
      if (upload.result.kind !== 'failed') return upload.result;
      this.#options.logger.warn(
        { channel: 'whatsapp', err: upload.result.error },
        'whatsapp: audio refused; sending the text',
      );
    }
    return this.#post(
      { type: 'text', text: { preview_url: false, body: this.format(message.text) } },
      message.chatId,
      signal,
    );
  }

  /** `POST {graph}/{phone_number_id}/media` (multipart): the audio's media id. */
  async #upload(
    audio: NonNullable<OutboundMessage['audio']>,
    signal: AbortSignal,
  ): Promise<{ id: string } | { result: SendResult }> {
    const form = new FormData();
    form.set('messaging_product', 'whatsapp');
    form.set('type', audio.contentType);
    form.set('file', new Blob([audio.data], { type: audio.contentType }), 'reply.ogg');
    let response: Response;
    try {
      response = await this.#fetch(`${this.#graph}/${this.#options.phoneNumberId}/media`, {
        method: 'POST',
        headers: { authorization: `Bearer ${this.#options.accessToken}` },
        body: form,
        signal,
      });
    } catch (error) {
      // Nothing is sent to the person by an upload: safe to try again.
      return { result: { kind: 'retry', error: `whatsapp media upload: ${errorMessage(error)}` } };
    }
    const body = (await response.json().catch(() => null)) as {
      id?: string;
      error?: { message?: string };
    } | null;
    if (response.ok && body?.id) return { id: body.id };
    return {
      result: httpFailure(
        response.ok ? 502 : response.status,
        `media upload: ${body?.error?.message ?? response.statusText}`,
        retryAfterSeconds(response.headers.get('retry-after')),
      ),
    };
  }

  async #post(content: Record<string, unknown>, to: string, signal: AbortSignal): Promise<SendResult> {
    const url = `${this.#graph}/${this.#options.phoneNumberId}/messages`;
    let response: Response;
    try {
      response = await this.#fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${this.#options.accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ messaging_product: 'whatsapp', recipient_type: 'individual', to, ...content }),
        signal,
      });
    } catch (error) {
      return networkFailure(error, 'whatsapp messages');
    }
    const body = (await response.json().catch(() => null)) as {
      messages?: Array<{ id?: string }>;
      error?: { message?: string; code?: number };
    } | null;
    if (response.ok) {
      const id = body?.messages?.[0]?.id;
      return id
        ? { kind: 'sent', messageId: id }
        : { kind: 'ambiguous', error: 'the Graph API answered without a message id' };
    }
    const detail = body?.error?.message ?? response.statusText;
    if (body?.error?.code !== undefined && THROTTLED.has(body.error.code)) {
      return {
        kind: 'retry',
        error: `whatsapp throttled (${body.error.code}): ${detail}`,
        retryAfterMs: (retryAfterSeconds(response.headers.get('retry-after')) ?? 30) * 1000,
      };
    }
    return httpFailure(response.status, detail, retryAfterSeconds(response.headers.get('retry-after')));
  }
}

/** Builds the adapter from `channels.whatsapp`, or null unless all four settings are present. */
export function whatsappFromConfig(channels: ChannelsConfig, logger: Logger): WhatsAppAdapter | null {
  const { whatsapp } = channels;
  if (!whatsapp.access_token || !whatsapp.app_secret || !whatsapp.verify_token || !whatsapp.phone_number_id)
    return null;
  return new WhatsAppAdapter({
    accessToken: whatsapp.access_token,
    appSecret: whatsapp.app_secret,
    verifyToken: whatsapp.verify_token,
    phoneNumberId: whatsapp.phone_number_id,
    graphUrl: whatsapp.graph_url,
    logger,
  });
}
