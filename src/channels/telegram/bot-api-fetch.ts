import type { ApiClientOptions } from 'grammy';
import { StewardError } from '../../errors.ts';
import { retryAfterSeconds } from '../send-errors.ts';

/**
 * An HTTP answer from the Bot API's address that is not a Bot API result — a gateway's HTML
 * page during an outage, a body that is not JSON. It is an answer, so its status says what
 * happened; grammy alone would report it as a failed request of unknown outcome.
 */
export class BotApiAnswerError extends StewardError {
  readonly status: number;
  readonly retryAfterSeconds: number | null;
  /** What the body was, in a few words (an HTML page's title). */
  readonly summary: string;
  constructor(status: number, statusText: string, body: string, retryAfter: number | null) {
    const summary = answerSummary(body);
    super(
      'telegram_unreadable_answer',
      `the Bot API address answered HTTP ${status}${statusText ? ` ${statusText}` : ''} with ${summary}`,
    );
    this.name = 'BotApiAnswerError';
    this.status = status;
    this.retryAfterSeconds = retryAfter;
    this.summary = summary;
  }
}

/** What the body was, in a few words: an HTML page's title, or its first characters. */
function answerSummary(body: string): string {
  if (!body.trim()) return 'an empty body';
  const title = /<title[^>]*>([^<]{1,120})<\/title>/i.exec(body)?.[1]?.trim();
  if (title) return `an HTML page "${title}"`;
  const text = body
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return `a body that is not the Bot API's ("${text.slice(0, 80)}")`;
}

/** The Bot API answers JSON with a boolean `ok`, errors included; anything else is someone else's answer. */
function isBotApiAnswer(body: string): boolean {
  try {
    const parsed = JSON.parse(body) as { ok?: unknown } | null;
    return typeof parsed === 'object' && parsed !== null && typeof parsed.ok === 'boolean';
  } catch {
    return false;
  }
}

type GrammyFetch = NonNullable<ApiClientOptions['fetch']>;

/** The part of the request grammy builds that is passed on (its node-fetch agent is not). */
type GrammyRequest = {
  method?: string;
  headers?: Record<string, string>;
  body?: string | AsyncIterable<Uint8Array>;
  /** grammy's `abort-controller` polyfill signal. */
  signal?: { aborted: boolean; addEventListener(type: 'abort', listener: () => void): void } & {
    removeEventListener(type: 'abort', listener: () => void): void;
  };
};

/**
 * The `fetch` grammy calls, over Node's own fetch, so that an answer that is not the Bot API's
 * keeps its HTTP status: such an answer becomes a BotApiAnswerError (inside grammy's HttpError),
 * and only a request with no answer at all — a timeout, a reset — stays of unknown outcome.
 */
export function botApiFetch(fetchImpl: typeof fetch = globalThis.fetch): GrammyFetch {
  const call = async (url: string, init: GrammyRequest = {}): Promise<Response> => {
    const controller = new AbortController();
    const abort = () => controller.abort();
    if (init.signal?.aborted) controller.abort();
    else init.signal?.addEventListener('abort', abort);
    try {
      const response = await fetchImpl(url, {
        method: init.method,
        headers: init.headers,
        body: init.body as RequestInit['body'],
        signal: controller.signal,
        // A multipart upload is a stream.
        duplex: 'half',
      } as RequestInit);
      let body: string;
      try {
        body = await response.text();
      } catch (error) {
        // A success whose body was cut off says nothing certain; an error status does.
        if (response.ok) throw error;
        body = '';
      }
      if (isBotApiAnswer(body)) {
        return new Response(body, {
          status: response.status,
          headers: { 'content-type': 'application/json' },
        });
      }
      throw new BotApiAnswerError(
        response.status,
        response.statusText,
        body,
        retryAfterSeconds(response.headers.get('retry-after')),
      );
    } finally {
      init.signal?.removeEventListener('abort', abort);
    }
  };
  return call as unknown as GrammyFetch;
}
