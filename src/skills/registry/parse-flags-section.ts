import { markdownSection } from './markdown-section.ts';

/** One flag as documented in a skill page's `## Flags` section. */
export type DocumentedFlag = { name: string; required: boolean; description: string };

// `--due-before   Tasks due …`, also tolerating a list bullet or backticks around the flag.
const FLAG_LINE = /^\s*(?:[-*+]\s+)?`?--([A-Za-z0-9][A-Za-z0-9_-]*)`?(.*)$/;

/**
 * Reads the `## Flags` section (seed 001 §2.3: `--flag-name    Description (required)`).
 * Names come back in snake_case, the way handlers' zod schemas key them. An indented line
 * under a flag continues its description. The first mention of a flag wins.
 */
export function parseFlagsSection(body: string): DocumentedFlag[] {
  const lines = markdownSection(body, 'Flags') ?? [];
  const flags: DocumentedFlag[] = [];
  let current: DocumentedFlag | null = null;
  for (const line of lines) {
    const match = FLAG_LINE.exec(line);
    if (match) {
      const name = match[1]!.toLowerCase().replaceAll('-', '_');
      const description = match[2]!.trim();
      current = flags.some((flag) => flag.name === name) ? null : { name, required: false, description };
      if (current) flags.push(current);
    } else if (current && /^\s+\S/.test(line)) {
      current.description = `${current.description} ${line.trim()}`.trim();
    } else if (line.trim() !== '' && !/^\s*(```|~~~)/.test(line)) {
      current = null;
    }
  }
  for (const flag of flags) flag.required = /\(required\)/i.test(flag.description);
  return flags;
}
