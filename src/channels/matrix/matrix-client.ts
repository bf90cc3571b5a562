import { StewardError } from '../../errors.ts';
import { retryAfterSeconds } from '../send-errors.ts';

/**
 * A Matrix answer that is not a success: its status, Matrix's `errcode` when the body is
 * Matrix's JSON, and how long to wait when the homeserver says so. Never carries the token.
 */
export class MatrixAnswerError extends StewardError {
  readonly status: number;
  readonly errcode: string | null;
  readonly retryAfterMs: number | null;
  constructor(
    what: string,
    status: number,
    errcode: string | null,
    detail: string,
    retryAfterMs: number | null,
  ) {
    super(
      'matrix_refused',
      `${what} answered HTTP ${status}${errcode ? ` ${errcode}` : ''}${detail ? `: ${detail}` : ''}`,
    );
    this.name = 'MatrixAnswerError';
    this.status = status;
    this.errcode = errcode;
    this.retryAfterMs = retryAfterMs;
  }
}

/** A 2xx answer whose body is not JSON: the request arrived, but what it did is unknown. */
export class MatrixUnreadableAnswer extends StewardError {
  constructor(what: string, status: number) {
    super('matrix_unreadable_answer', `${what} answered HTTP ${status} with a body that is not JSON`);
    this.name = 'MatrixUnreadableAnswer';
  }
}

export type MatrixClientOptions = {
  homeserverUrl: string;
  accessToken: string;
  fetch?: typeof fetch;
};

/**
 * The Client-Server API over plain fetch: a bearer token, JSON in and out, failures as
 * MatrixAnswerError (an HTTP answer) or the fetch error (no answer). Paths are under
 * `/_matrix/client/v3`; ids in them are encoded here.
 */
export class MatrixClient {
  readonly #options: MatrixClientOptions;
  readonly #base: string;

  constructor(options: MatrixClientOptions) {
    this.#options = options;
    this.#base = `${options.homeserverUrl.replace(/\/+$/, '')}/_matrix/client/v3`;
  }

  async request<T>(
    method: 'GET' | 'POST' | 'PUT',
    path: string,
    options: { query?: Record<string, string>; body?: unknown; signal?: AbortSignal } = {},
  ): Promise<T> {
    const query = options.query ? `?${new URLSearchParams(options.query)}` : '';
    const fetchImpl = this.#options.fetch ?? globalThis.fetch;
    const what = `matrix ${method} ${path}`;
    const response = await fetchImpl(`${this.#base}${path}${query}`, {
      method,
      headers: {
        authorization: `Bearer ${this.#options.accessToken}`,
        ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      signal: options.signal,
    });
    const text = await response.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : {};
    } catch {
      json = undefined;
    }
    if (response.ok) {
      if (json === undefined) throw new MatrixUnreadableAnswer(what, response.status);
      return json as T;
    }
    const body = (json ?? {}) as { errcode?: unknown; error?: unknown; retry_after_ms?: unknown };
    const errcode = typeof body.errcode === 'string' ? body.errcode : null;
    const detail =
      typeof body.error === 'string'
        ? body.error.slice(0, 200)
        : json === undefined
          ? (/<title[^>]*>([^<]{1,120})<\/title>/i.exec(text)?.[1]?.trim() ?? 'a body that is not JSON')
          : '';
    const headerSeconds = retryAfterSeconds(response.headers.get('retry-after'));
    const retryAfterMs =
      typeof body.retry_after_ms === 'number'
        ? body.retry_after_ms
        : headerSeconds !== null
          ? headerSeconds * 1000
          : null;
    throw new MatrixAnswerError(what, response.status, errcode, detail, retryAfterMs);
  }
}

/** A room or user id as one path segment. */
export const segment = (id: string) => encodeURIComponent(id);
