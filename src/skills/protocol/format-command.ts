import type { FlagValue } from './parse-command.ts';
import { quoteArg } from './quote-arg.ts';

/**
 * Renders a command from its parts, quoting values with `quoteArg`, so that `parseCommand` reads
 * back the same skill, positionals and flags (a one-element array comes back as a plain string).
 * Flag keys are normalized names (`due_before`) and are written as `--due-before`; a `help` key
 * renders as `--help`, which parses back as `help: true`, not as a flag.
 */
export function formatCommand(
  skill: string,
  flags: Readonly<Record<string, FlagValue>>,
  positionals: readonly string[] = [],
): string {
  const parts = [skill, ...positionals.map(quoteArg)];
  for (const [name, value] of Object.entries(flags)) {
    parts.push(`--${name.replaceAll('_', '-')}`);
    if (typeof value === 'string') parts.push(quoteArg(value));
    else if (Array.isArray(value)) parts.push(...value.map(quoteArg));
  }
  return parts.join(' ');
}
