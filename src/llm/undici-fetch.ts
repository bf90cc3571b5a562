import { pipeline, Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { request as undiciRequest } from 'undici';

/*
 * The `fetch` the openai SDK is given (its documented `fetch` option): the HTTP client Node's
 * own fetch is built on, undici, called through its `request` API. The wire is the same —
 * keep-alive HTTP/1.1, TLS, the same connection pool defaults — without the layers fetch adds
 * for the web platform (Request and Headers objects guarded field by field, the fetch
 * controller, a body turned into a stream and back): about 4 % of an engine turn with an
 * instant model, in runs alternating with the global fetch. What fetch does that `request`
 * does not is done here: a redirect is followed (by fetch itself), and a compressed answer is
 * decompressed.
 *
 * Only what the SDK sends goes this way: a URL string and a body of text or bytes. Anything
 * else (a Request, a form, a stream) goes to the global fetch, as before.
 */

type Request = typeof undiciRequest;

/** Redirects that say the request was not handled (a 303 says it was: it is the answer). */
const RESENT = new Set([301, 302, 307, 308]);
/** Statuses whose response has no body (the Response constructor refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

const DECOMPRESSORS: Record<string, () => NodeJS.ReadWriteStream> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

export function undiciFetch(request: Request): typeof fetch {
  return async (input, init = {}) => {
    const body = init.body;
    if (
      (typeof input !== 'string' && !(input instanceof URL)) ||
      (body != null && typeof body !== 'string' && !(body instanceof Uint8Array))
    ) {
      return fetch(input, init);
    }
    const answer = await request(input, {
      method: (init.method ?? 'GET') as 'GET',
      headers: Object.fromEntries(new Headers(init.headers)),
      body: body ?? null,
      signal: init.signal ?? undefined,
    });
    if (RESENT.has(answer.statusCode) && answer.headers.location) {
      // Not handled there: fetch sends it again where it was sent, and follows on from there.
      answer.body.resume();
      return fetch(input, init);
    }
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
        headers.append(name, one);
      }
    }
    if (NULL_BODY.has(answer.statusCode)) {
      answer.body.resume();
      return new Response(null, { status: answer.statusCode, headers });
    }
    return new Response(Readable.toWeb(decoded(answer.body, headers)) as ReadableStream<Uint8Array>, {
      status: answer.statusCode,
      headers,
    });
  };
}

/** The body as fetch gives it: decompressed when the server compressed it. */
function decoded(body: Readable, headers: Headers): Readable {
  const encoding = headers.get('content-encoding')?.trim().toLowerCase();
  const decompress = encoding ? DECOMPRESSORS[encoding] : undefined;
  if (!decompress) return body;
  headers.delete('content-encoding');
  headers.delete('content-length');
  // An error or a cancel on either side ends both (the SDK cancels a stream it stops reading).
  return pipeline(body, decompress(), () => undefined) as unknown as Readable;
}
