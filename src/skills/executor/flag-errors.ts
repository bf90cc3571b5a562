import type { z } from 'zod';

const dashed = (key: string) => `--${key.replaceAll('_', '-')}`;

/** The flags a handler's schema accepts, as the model writes them (`--due-before`). */
export function acceptedFlags(schema: z.ZodObject): string[] {
  return Object.keys(schema.shape).map(dashed).sort();
}

/**
 * Turns a zod failure over a skill's flags into one message the model can act on: which
 * flag, what was wrong, what is accepted, and where the help page is.
 */
export function describeFlagErrors(skill: string, schema: z.ZodObject, error: z.ZodError): string {
  const lines: string[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      const unknown = issue.keys.map(dashed).join(', ');
      lines.push(
        `Unknown flag ${unknown} for ${skill}. Accepted flags: ${acceptedFlags(schema).join(', ')}.`,
      );
      continue;
    }
    const key = issue.path[0];
    if (typeof key !== 'string') {
      lines.push(issue.message);
      continue;
    }
    const missing = issue.code === 'invalid_type' && (issue as { input?: unknown }).input === undefined;
    lines.push(
      missing ? `Missing required flag ${dashed(key)}.` : `Invalid ${dashed(key)}: ${issue.message}.`,
    );
  }
  lines.push(`See \`${skill} --help\` for the flags and examples.`);
  return lines.join(' ');
}
