import type { Context } from 'hono';
import { errorMessage } from '../errors.ts';
import type { Logger } from '../logging/index.ts';
import { clientAddress, RateLimitedError } from '../security/index.ts';
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

function toResponse(c: Context, answer: WebhookAnswer): Response {
  if ('json' in answer) return c.json(answer.json as object, answer.status as 200);
  if ('text' in answer) return c.text(answer.text, answer.status as 200);
  return c.body(null, answer.status as 200);
}

/**
 * Every webhook passes here. The headers are verified before any of the body is read (a
 * request that fails gets 401 and its body is never read); bodies over 1 MB get 413; a
 * signature over the body is checked before the body is parsed; a malformed body is dropped
 * with 400, and a payload the channel cannot use is acknowledged and dropped. Verification
 * always comes first: a verified request is never refused because of other requests, and only
 * failures are throttled — an address with too many has its unverifiable requests answered
 * 429 for a while (behind a reverse proxy every platform shares that address). Infrastructure
 * failures answer 503 (the platform retries), never 500. One access line per request: path
 * without query, no secrets.
 */
export function createWebhookGuard(deps: WebhookGuardDeps): WebhookGuard {
  const { logger, limiter } = deps;
  return (channel, verifier, handler) => async (c) => {
    const started = performance.now();
    const address = clientAddress(c);
    let status = 500;
    let note: string | undefined;
    let dropped = false;
    const refuse = async (code: number, reason: string) => {
      note = reason;
      status = code;
      await deps.recordRejection(channel, reason.split(':')[0]!);
      return c.body(null, code as 401);
    };
    /** A request that failed verification: counted; once the address has too many, 429. */
    const unverified = async (code: number, reason: string) => {
      deps.onVerification?.(channel, 'rejected');
      const blockedMs = limiter.blockedFor(address);
      if (blockedMs > 0) {
        // Already throttled: refused without a database write for each one.
        status = 429;
        note = `throttled after repeated verification failures (${reason})`;
        c.header('retry-after', String(Math.ceil(blockedMs / 1000)));
        return c.body(null, 429);
      }
      if (limiter.fail(address)) {
        logger.warn(
          { channel, address },
          'webhook: too many verification failures; unverifiable requests from this address blocked for a while',
        );
      }
      return refuse(code, reason);
    };
    try {
      const declared = Number(c.req.header('content-length'));
      const url = new URL(c.req.url);
      const check = await verifier.headers(c.req.raw.headers, url);
      if (typeof check === 'object') return await unverified(verifier.refusedStatus ?? 401, check.refused);
      if (Number.isFinite(declared) && declared > BODY_LIMIT_BYTES) return await refuse(413, 'oversized');
      const read = await readBodyWithin(c.req.raw, BODY_LIMIT_BYTES);
      if ('tooLarge' in read) return await refuse(413, 'oversized');
      if (check === 'signed') {
        const problem = verifier.body
          ? verifier.body(c.req.raw.headers, read.body)
          : { refused: 'no body verifier' };
        if (problem) return await unverified(401, problem.refused);
      }
      deps.onVerification?.(channel, 'verified');
      let json: unknown;
      const text = new TextDecoder().decode(read.body);
      if (text.trim()) {
        try {
          json = JSON.parse(text);
        } catch {
          return await refuse(400, 'malformed: body is not JSON');
        }
      }
      const answer = await handler({ headers: c.req.raw.headers, url, body: read.body, json });
      status = answer.status;
      if (answer.dropped) {
        dropped = true;
        note = `dropped: ${answer.dropped}`;
        await deps.recordRejection(channel, 'dropped');
      }
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
      if (dropped) logger.warn(record, 'webhook acknowledged and dropped: Steward cannot use it');
      else if (status >= 400) logger.warn(record, 'webhook refused');
      else logger.info(record, 'webhook');
    }
  };
}
