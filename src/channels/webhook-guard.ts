import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import { errorMessage } from '../errors.ts';
import type { Logger } from '../logging/index.ts';
import { RateLimitedError } from '../security/index.ts';
import type { FailureLimiter } from './failure-limiter.ts';
import { BODY_LIMIT_BYTES, readBodyWithin } from './read-body.ts';
import type { ChannelName, WebhookAnswer, WebhookGuard } from './types.ts';

export type WebhookGuardDeps = {
  logger: Logger;
  limiter: FailureLimiter;
  /** Counts a refused or dropped request for the operator view. Must not throw. */
  recordRejection(channel: ChannelName, reason: string): Promise<void>;
  /** Every request once verified or refused by verification (metrics, the failure-rate alert). Must not throw. */
  onVerification?: (channel: ChannelName, result: 'verified' | 'rejected') => void;
};

function clientAddress(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown'; // in-process requests (tests) have no socket
  }
}

function toResponse(c: Context, answer: WebhookAnswer): Response {
  if ('json' in answer) return c.json(answer.json as object, answer.status as 200);
  if ('text' in answer) return c.text(answer.text, answer.status as 200);
  return c.body(null, answer.status as 200);
}

/**
 * Every webhook passes here: a blocked address is refused first; then the headers are
 * verified before any of the body is read (a request that fails gets 401 and its body is never
 * read); bodies over 1 MB get 413; a signature over the body is checked before the body is
 * parsed; a malformed body is dropped with 400. Infrastructure failures answer 503 (the
 * platform retries), never 500. One access line per request: path without query, no secrets.
 */
export function createWebhookGuard(deps: WebhookGuardDeps): WebhookGuard {
  const { logger, limiter } = deps;
  return (channel, verifier, handler) => async (c) => {
    const started = performance.now();
    const address = clientAddress(c);
    let status = 500;
    let note: string | undefined;
    const refuse = async (code: number, reason: string, countAsFailure: boolean) => {
      note = reason;
      status = code;
      if (countAsFailure) deps.onVerification?.(channel, 'rejected');
      if (countAsFailure && limiter.fail(address)) {
        logger.warn(
          { channel, address },
          'webhook: too many verification failures; address blocked for a while',
        );
      }
      await deps.recordRejection(channel, reason.split(':')[0]!);
      return c.body(null, code as 401);
    };
    try {
      const blockedMs = limiter.blockedFor(address);
      if (blockedMs > 0) {
        status = 429;
        note = 'address blocked after repeated verification failures';
        c.header('retry-after', String(Math.ceil(blockedMs / 1000)));
        return c.body(null, 429);
      }
      const declared = Number(c.req.header('content-length'));
      const url = new URL(c.req.url);
      const check = await verifier.headers(c.req.raw.headers, url);
      if (typeof check === 'object') return await refuse(verifier.refusedStatus ?? 401, check.refused, true);
      if (Number.isFinite(declared) && declared > BODY_LIMIT_BYTES)
        return await refuse(413, 'oversized', false);
      const read = await readBodyWithin(c.req.raw, BODY_LIMIT_BYTES);
      if ('tooLarge' in read) return await refuse(413, 'oversized', false);
      if (check === 'signed') {
        const problem = verifier.body
          ? verifier.body(c.req.raw.headers, read.body)
          : { refused: 'no body verifier' };
        if (problem) return await refuse(401, problem.refused, true);
      }
      deps.onVerification?.(channel, 'verified');
      let json: unknown;
      const text = new TextDecoder().decode(read.body);
      if (text.trim()) {
        try {
          json = JSON.parse(text);
        } catch {
          return await refuse(400, 'malformed: body is not JSON', false);
        }
      }
      const answer = await handler({ headers: c.req.raw.headers, url, body: read.body, json });
      status = answer.status;
      return toResponse(c, answer);
    } catch (error) {
      if (error instanceof RateLimitedError) {
        status = 429;
        note = 'rate limited';
        c.header('Retry-After', String(error.retryAfterSeconds));
        return c.json({ error: 'rate_limited', message: error.message }, 429);
      }
      status = 503;
      note = errorMessage(error);
      logger.error({ err: error, channel }, 'webhook: could not store the request; the platform will retry');
      return c.body(null, 503);
    } finally {
      const record = {
        channel,
        method: c.req.method,
        path: c.req.path,
        status,
        ms: Math.round((performance.now() - started) * 10) / 10,
        address,
        ...(note ? { note } : {}),
      };
      if (status >= 400) logger.warn(record, 'webhook refused');
      else logger.info(record, 'webhook');
    }
  };
}
