import type { Context } from 'hono';

/** A refusal made at the edge, before or around a route: body too large, too many failures. */
export type EdgeRefusal = { status: 413 | 429; code: string; message: string };

/**
 * The refusal in the shape the route's clients read: OpenAI's error object on the
 * OpenAI-compatible `/v1` (so its SDKs show the message), Steward's `{error, message}` elsewhere.
 */
export function refusal(c: Context, { status, code, message }: EdgeRefusal): Response {
  if (c.req.path === '/v1' || c.req.path.startsWith('/v1/')) {
    const type = status === 429 ? 'rate_limit_error' : 'invalid_request_error';
    return c.json({ error: { message, type, param: null, code } }, status);
  }
  return c.json({ error: code, message }, status);
}
