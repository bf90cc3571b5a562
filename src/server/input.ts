import type { Context } from 'hono';
import { RefusedError } from '../errors.ts';
import { unstorableCharacter } from '../skills/index.ts';

/** Text a person or program sent that cannot be stored as is (NUL, half a surrogate pair), or null. */
export function textProblem(field: string, text: string): string | null {
  const bad = unstorableCharacter(text);
  return bad
    ? `${field} contains ${bad.what} at character ${bad.index + 1}; remove it and send again.`
    : null;
}

export function badRequest(c: Context, message: string): Response {
  return c.json({ error: 'bad_request', message }, 400);
}

/**
 * A refused message as Steward's JSON error (`{error, message}` with the refusal's status and,
 * for rate limits, Retry-After); anything else is rethrown for the app's error handler.
 */
export function refusalResponse(c: Context, error: unknown, extra: Record<string, unknown> = {}): Response {
  if (!(error instanceof RefusedError)) throw error;
  if (error.retryAfterSeconds !== null) c.header('Retry-After', String(error.retryAfterSeconds));
  return c.json({ error: error.label, message: error.message, ...extra }, error.status);
}
