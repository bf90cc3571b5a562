import type { Context, MiddlewareHandler } from 'hono';
import { StewardError } from '../errors.ts';
import { refusal } from './refusal.ts';

/*
 * A body limit on every route, enforced while the body streams in: a declared Content-Length
 * over the limit is refused before anything is read, and a body without one (chunked) stops
 * being read at the limit. Nothing is buffered here: the route reads the body as before.
 */

/** Largest JSON body the API reads (/api, /v1, /mcp; a message is at most limits.max_message_chars). */
export const API_BODY_LIMIT = 1024 * 1024;
/** Largest body of a dashboard form (login, logout, the pages' buttons): a few short fields. */
export const FORM_BODY_LIMIT = 64 * 1024;
/**
 * The dashboard chat's message forms: its 32,000 characters (`MAX_TEXT` in web/pages/chat.ts)
 * percent-encoded at up to 9 bytes each, plus the form limit for the rest.
 */
export const CHAT_FORM_BODY_LIMIT = 32_000 * 9 + FORM_BODY_LIMIT;
/** What a multipart voice upload may add around the audio itself. */
export const UPLOAD_WRAPPING_BYTES = 64 * 1024;

/** The limit of the routes at `path`: an exact path, or a prefix ending in `/*`. */
export type BodyLimitRule = {
  path: string;
  /** Read per request, so a setting's hot reload applies. */
  maxBytes: () => number;
  /** The setting the limit comes from, named in the refusal. */
  setting?: string;
};

/** Thrown into a route reading a body past its limit (the route's 413 is written at the edge). */
export class BodyTooLargeError extends StewardError {
  constructor(maxBytes: number) {
    super('payload_too_large', `The request body is over the limit of ${maxBytes} bytes.`);
    this.name = 'BodyTooLargeError';
  }
}

const overflowed = new WeakSet<Context>();

/** Whether this request's body went past its limit while a route read it. */
export function bodyOverflowed(c: Context): boolean {
  return overflowed.has(c);
}

function matches(rule: BodyLimitRule, path: string): boolean {
  if (rule.path.endsWith('/*')) {
    const prefix = rule.path.slice(0, -2);
    return path === prefix || path.startsWith(`${prefix}/`);
  }
  return path === rule.path;
}

function tooLarge(c: Context, maxBytes: number, setting: string | undefined): Response {
  const what = setting ? ` (${setting})` : '';
  const response = refusal(c, {
    status: 413,
    code: 'payload_too_large',
    message: `The request body is over the limit of ${maxBytes} bytes${what}. Send a smaller one.`,
  });
  // The rest of the body is not read: the connection cannot carry another request.
  response.headers.set('connection', 'close');
  return response;
}

/** Counts bytes through; past `maxBytes` it stops reading the source and errors the stream. */
function limitedStream(
  source: ReadableStream<Uint8Array>,
  maxBytes: number,
  onOverflow: () => void,
): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  let received = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) return controller.close();
      received += value.byteLength;
      if (received > maxBytes) {
        onOverflow();
        await reader.cancel().catch(() => undefined);
        controller.error(new BodyTooLargeError(maxBytes));
        return;
      }
      controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/**
 * The body limit of the first rule matching the path, else `fallback`; paths `skip` says are
 * left alone (webhooks: their guard reads within its own limit after verifying). A body that
 * goes over answers 413 whatever the route made of the failed read.
 */
export function requestBodyLimits(options: {
  rules: BodyLimitRule[];
  fallback: number;
  skip?: (path: string) => boolean;
}): MiddlewareHandler {
  return async (c, next) => {
    const raw = c.req.raw;
    if (!raw.body || options.skip?.(c.req.path)) return next();
    const rule = options.rules.find((candidate) => matches(candidate, c.req.path));
    const maxBytes = rule ? rule.maxBytes() : options.fallback;
    const declared = raw.headers.has('transfer-encoding') ? null : raw.headers.get('content-length');
    if (declared !== null) {
      // Node's HTTP parser never delivers more than the declared length.
      if (Number(declared) > maxBytes) return tooLarge(c, maxBytes, rule?.setting);
      return next();
    }
    c.req.raw = new Request(raw, {
      body: limitedStream(raw.body, maxBytes, () => overflowed.add(c)),
      duplex: 'half',
    } as RequestInit);
    await next();
    if (overflowed.has(c)) {
      // The route may have caught the failed read and answered something else: a 413 it is.
      c.res = undefined;
      c.res = tooLarge(c, maxBytes, rule?.setting);
    }
  };
}
