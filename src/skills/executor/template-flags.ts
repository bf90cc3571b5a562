import { parseFlagsSection } from '../registry/index.ts';

/** Flags a template skill was given that its `## Flags` section does not document, or lacks. */
export function templateFlagProblem(
  name: string,
  body: string,
  given: Record<string, unknown>,
): string | null {
  const documented = parseFlagsSection(body);
  const known = new Set(documented.map((flag) => flag.name));
  const normal = (flag: string) => flag.toLowerCase().replaceAll('-', '_');
  const dashed = (flag: string) => `--${flag.replaceAll('_', '-')}`;
  const unknown = Object.keys(given).filter((flag) => !known.has(normal(flag)));
  const see = `See \`${name} --help\`.`;
  if (unknown.length) {
    const takes = documented.length
      ? `Its flags: ${documented.map((flag) => dashed(flag.name)).join(', ')}.`
      : 'It takes no flags.';
    return `${name} has no flag ${unknown.map((flag) => dashed(normal(flag))).join(', ')}. ${takes} ${see}`;
  }
  const givenNames = new Set(Object.keys(given).map(normal));
  const missing = documented.filter((flag) => flag.required && !givenNames.has(flag.name));
  if (missing.length)
    return `${name} needs ${missing.map((flag) => dashed(flag.name)).join(', ')} (required). ${see}`;
  return null;
}
