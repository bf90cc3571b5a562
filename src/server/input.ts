import type { Context } from 'hono';
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
