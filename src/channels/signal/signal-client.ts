import { StewardError } from '../../errors.ts';
import { retryAfterSeconds } from '../send-errors.ts';

/** A signal-cli REST API answer that is not a success; `detail` is its `error` text, never a credential. */
export class SignalAnswerError extends StewardError {
  readonly status: number;
  readonly retryAfterSeconds: number | null;
  constructor(what: string, status: number, detail: string, retryAfter: number | null) {
    super('signal_refused', `${what} answered HTTP ${status}${detail ? `: ${detail}` : ''}`);
    this.name = 'SignalAnswerError';
    this.status = status;
    this.retryAfterSeconds = retryAfter;
  }
}

export type SignalClientOptions = {
  /** `http(s)://host:port`; `user:password@` in it is sent as HTTP Basic auth (a proxy in front). */
  cliUrl: string;
  fetch?: typeof fetch;
};

/**
 * bbernhard/signal-cli-rest-api over plain fetch: JSON in and out, failures as SignalAnswerError
 * (an HTTP answer) or the fetch error (no answer).
 */
export class SignalClient {
  /** The API root without credentials. */
  readonly base: string;
  /** `Basic …` when the URL carries a user, else null. */
  readonly authorization: string | null;
  readonly #fetch: typeof fetch;

  constructor(options: SignalClientOptions) {
    const url = new URL(options.cliUrl);
    this.authorization = url.username
      ? `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`
      : null;
    url.username = '';
    url.password = '';
    this.base = url.toString().replace(/\/+$/, '');
    this.#fetch = options.fetch ?? globalThis.fetch;
  }

  /** The raw response of a request (for binary answers); throws SignalAnswerError for a non-2xx one. */
  async raw(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    options: { query?: Record<string, string>; body?: unknown; signal?: AbortSignal } = {},
  ): Promise<Response> {
    const query = options.query ? `?${new URLSearchParams(options.query)}` : '';
    const response = await this.#fetch(`${this.base}${path}${query}`, {
      method,
      headers: {
        ...(this.authorization ? { authorization: this.authorization } : {}),
        ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      signal: options.signal,
    });
    if (response.ok) return response;
    const text = await response.text().catch(() => '');
    let detail = '';
    try {
      const body = JSON.parse(text) as { error?: unknown };
      if (typeof body.error === 'string') detail = body.error.slice(0, 300);
    } catch {
      detail = /<title[^>]*>([^<]{1,120})<\/title>/i.exec(text)?.[1]?.trim() ?? 'a body that is not JSON';
    }
    throw new SignalAnswerError(
      `signal-cli ${method} ${path.split('?')[0]}`,
      response.status,
      detail,
      retryAfterSeconds(response.headers.get('retry-after')),
    );
  }

  /** A JSON request; an empty 2xx body reads as `null`. */
  async request<T>(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    options: { query?: Record<string, string>; body?: unknown; signal?: AbortSignal } = {},
  ): Promise<T | null> {
    const response = await this.raw(method, path, options);
    const text = await response.text();
    if (!text) return null;
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new StewardError(
        'signal_unreadable_answer',
        `signal-cli ${method} ${path} answered HTTP ${response.status} with a body that is not JSON`,
      );
    }
  }
}
