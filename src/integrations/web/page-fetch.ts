import { errorMessage } from '../../errors.ts';
import { createSsrfGuard, type ResolveAll, SsrfBlockedError, type UrlCheck } from '../../security/index.ts';
import { allowEntryFor, allowedFor, type WebSettings } from './web-settings.ts';

/** Redirects followed before giving up. */
export const MAX_REDIRECTS = 5;

const REQUEST_HEADERS = {
  'user-agent': 'Mozilla/5.0 (compatible; Steward; +web.fetch)',
  accept: 'text/html,application/xhtml+xml,application/pdf;q=0.9,text/plain;q=0.8,*/*;q=0.5',
  'accept-encoding': 'gzip, deflate',
};

/** A page as it came off the wire: the bytes read (at most the limit) and what the server said they are. */
export type FetchedPage = {
  /** Where the page was finally read from (after redirects). */
  url: string;
  /** Every earlier address, in order. */
  redirects: string[];
  /** The media type, lower-case, without parameters ('' when the server sent none). */
  mediaType: string;
  charset: string | null;
  bytes: Uint8Array;
  /** Reading stopped at the byte limit: the page goes on. */
  cut: boolean;
  /** The size the server announced (Content-Length), when it did. */
  declaredBytes: number | null;
};

export type PageFetch = { ok: true; page: FetchedPage } | { ok: false; reason: string; refused?: true };

export type PageFetchOptions = {
  settings: WebSettings;
  signal: AbortSignal;
  /** DNS for the guard (tests pass a table); default the system resolver. */
  resolve?: ResolveAll;
  /** Media types that are useless when cut (PDF): refused at once when announced larger than the limit. */
  wholeOnly?: (mediaType: string) => boolean;
};

/** The SSRF guard for one request to `url`: the private hosts this URL's port may reach are open. */
function guardFor(url: URL, options: Pick<PageFetchOptions, 'settings' | 'resolve'>) {
  return createSsrfGuard({
    allow: allowedFor(url, options.settings),
    resolve: options.resolve,
    allowHint: `list ${allowEntryFor(url)} in web.allow_hosts (STEWARD_WEB_ALLOW_HOSTS) if Steward should reach it`,
  });
}

/** Whether `url` may be fetched at all (scheme, credentials, every address its host resolves to). */
export function checkPageUrl(
  url: URL,
  options: Pick<PageFetchOptions, 'settings' | 'resolve'>,
): Promise<UrlCheck> {
  return guardFor(url, options).check(url);
}

/**
 * GETs `url` through the SSRF guard and reads its body up to `web.fetch_max_bytes`, within
 * `web.fetch_timeout_ms`. Redirects are followed here, one hop at a time, each checked like
 * the first (at most MAX_REDIRECTS). Never throws for what the site or the network does: a
 * refused address, an HTTP error, a timeout or an unreachable host is `{ok: false}` with the
 * reason; only the caller's own abort propagates.
 */
export async function fetchPage(url: URL, options: PageFetchOptions): Promise<PageFetch> {
  const { web } = options.settings;
  const timeout = AbortSignal.timeout(web.fetch_timeout_ms);
  const stop = new AbortController();
  const signal = AbortSignal.any([options.signal, timeout, stop.signal]);
  const redirects: string[] = [];
  let current = url;
  const failed = (error: unknown): PageFetch => {
    if (options.signal.aborted) throw error;
    if (timeout.aborted)
      return {
        ok: false,
        reason: `${current.href} did not answer in full within ${web.fetch_timeout_ms / 1000} s (web.fetch_timeout_ms)`,
      };
    const own = (error as { code?: unknown }).code;
    const cause = (error as { cause?: { code?: unknown } }).cause?.code;
    const code = typeof own === 'string' ? own : typeof cause === 'string' ? cause : null;
    const message = errorMessage(error);
    const detail = code && !message.includes(code) ? `${code}: ${message}` : message;
    return { ok: false, reason: `${current.host} could not be reached (${detail})` };
  };
  try {
    for (let hop = 0; ; hop++) {
      let response: Response;
      try {
        response = await guardFor(current, options).fetch(current, {
          headers: REQUEST_HEADERS,
          signal,
          redirect: 'manual',
        });
      } catch (error) {
        if (error instanceof SsrfBlockedError) {
          const why = error.message.replace(/^Not fetched: /, '').replace(/\.$/, '');
          const what = redirects.length
            ? `${redirects.at(-1)} redirected to ${current.href}, which is refused`
            : `${current.href} is refused`;
          return { ok: false, refused: true, reason: `${what}: ${why}` };
        }
        return failed(error);
      }
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location !== null) {
        await response.body?.cancel().catch(() => undefined);
        let next: URL;
        try {
          next = new URL(location, current);
        } catch {
          return {
            ok: false,
            reason: `${current.href} redirected to "${location.slice(0, 200)}", which is not a URL`,
          };
        }
        if (hop >= MAX_REDIRECTS)
          return {
            ok: false,
            reason: `${url.href} redirected more than ${MAX_REDIRECTS} times; not followed further`,
          };
        redirects.push(current.href);
        current = next;
        continue;
      }
      if (response.status < 200 || response.status >= 300) {
        await response.body?.cancel().catch(() => undefined);
        const text = response.statusText ? ` ${response.statusText}` : '';
        return { ok: false, reason: `${current.href} answered HTTP ${response.status}${text}` };
      }
      return await readBody(response, current, redirects, options, failed);
    }
  } finally {
    // Closes whatever connection is still open (a page cut at the limit).
    stop.abort();
  }
}

async function readBody(
  response: Response,
  url: URL,
  redirects: string[],
  options: PageFetchOptions,
  failed: (error: unknown) => PageFetch,
): Promise<PageFetch> {
  const maxBytes = options.settings.web.fetch_max_bytes;
  const [mediaType = '', ...parameters] = (response.headers.get('content-type') ?? '')
    .split(';')
    .map((part) => part.trim());
  const charset =
    parameters
      .map((parameter) => /^charset\s*=\s*"?([^";]+)"?$/i.exec(parameter)?.[1])
      .find(Boolean)
      ?.toLowerCase() ?? null;
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  const declaredBytes = Number.isFinite(declared) && declared >= 0 ? declared : null;
  const type = mediaType.toLowerCase();
  if (declaredBytes !== null && declaredBytes > maxBytes && options.wholeOnly?.(type)) {
    await response.body?.cancel().catch(() => undefined);
    return {
      ok: false,
      reason: `${url.href} is ${type} of ${declaredBytes} bytes, more than web.fetch_max_bytes (${maxBytes}); it was not read`,
    };
  }
  const encoding = (response.headers.get('content-encoding') ?? 'identity').trim().toLowerCase();
  let body = response.body;
  if (body && (encoding === 'gzip' || encoding === 'x-gzip' || encoding === 'deflate')) {
    body = body.pipeThrough(new DecompressionStream(encoding === 'deflate' ? 'deflate' : 'gzip'));
  } else if (body && encoding !== 'identity' && encoding !== '') {
    await body.cancel().catch(() => undefined);
    return { ok: false, reason: `${url.href} came in an encoding Steward cannot read (${encoding})` };
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  let cut = false;
  if (body) {
    const reader = body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        // Decompressed bytes count: a small compressed body cannot grow past the limit.
        if (total + value.byteLength > maxBytes) {
          chunks.push(value.subarray(0, maxBytes - total));
          total = maxBytes;
          cut = true;
          await reader.cancel().catch(() => undefined);
          break;
        }
        chunks.push(value);
        total += value.byteLength;
      }
    } catch (error) {
      return failed(error);
    }
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return {
    ok: true,
    page: { url: url.href, redirects, mediaType: type, charset, bytes, cut, declaredBytes },
  };
}
