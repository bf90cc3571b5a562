import type { z } from 'zod';

/**
 * Why a platform's payload failed its schema, as one log line: the fields and the types
 * expected, never the values sent (they may hold a message's text). `at` is the path of the
 * checked part within the whole payload.
 */
export function payloadProblem(error: z.ZodError, at?: string): string {
  const issues = error.issues.slice(0, 3).map((issue) => {
    const where = [...(at ? [at] : []), ...issue.path.map(String)].join('.') || '(body)';
    return `${where}: ${issue.message}`;
  });
  const more = error.issues.length > 3 ? ` (+${error.issues.length - 3} more)` : '';
  return `${issues.join('; ')}${more}`;
}
