import { errorMessage } from '../errors.ts';
import type { SendResult } from './types.ts';

/** Error codes that prove the request never reached the platform: safe to send again. */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'ERR_INVALID_URL',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
]);

function codesOf(error: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current && depth < 6; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    const next = (current as { cause?: unknown; error?: unknown; original?: unknown }).cause;
    current = next ?? (current as { error?: unknown }).error ?? (current as { original?: unknown }).original;
  }
  return codes;
}

/**
 * A network failure (no HTTP answer) as a SendResult: `retry` only when the request provably
 * never left (connection refused, DNS); anything else — a timeout, a reset — may have been
 * delivered, so it is `ambiguous` and never resent blindly.
 */
export function networkFailure(error: unknown, what: string): SendResult {
  const codes = codesOf(error);
  const message = errorMessage(error);
  const unsaid = codes.filter((code) => !message.includes(code));
  const detail = `${what}: ${message}${unsaid.length ? ` (${unsaid.join(', ')})` : ''}`;
  if (codes.some((code) => NOT_SENT.has(code))) return { kind: 'retry', error: detail };
  return { kind: 'ambiguous', error: detail };
}

/** An HTTP error answer as a SendResult: 429 and 5xx are retried (honouring Retry-After), others fail. */
export function httpFailure(status: number, detail: string, retryAfterSeconds?: number | null): SendResult {
  if (status === 429 || status >= 500) {
    return {
      kind: 'retry',
      error: `HTTP ${status}: ${detail}`,
      ...(retryAfterSeconds && retryAfterSeconds > 0 ? { retryAfterMs: retryAfterSeconds * 1000 } : {}),
    };
  }
  return { kind: 'failed', error: `HTTP ${status}: ${detail}` };
}

/** Seconds from a Retry-After header (seconds or an HTTP date), or null. */
export function retryAfterSeconds(header: string | null, now: number = Date.now()): number | null {
  if (!header) return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(header);
  return Number.isFinite(date) ? Math.max(0, Math.ceil((date - now) / 1000)) : null;
}
