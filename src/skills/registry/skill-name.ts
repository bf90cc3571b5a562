/** One segment of a skill name: a domain folder or an action file name. */
export const NAME_SEGMENT = /^[a-z][a-z0-9_]*$/;

/** Actions `get_skill` gives a meaning of its own (`email.all`, `email.help`). */
export const RESERVED_ACTIONS: readonly string[] = ['all', 'help'];

/** Why `name` cannot name a skill, or null when it can. */
export function skillNameProblem(name: string): string | null {
  const parts = name.split('.');
  if (parts.length !== 2 || !parts.every((part) => NAME_SEGMENT.test(part))) {
    return (
      `"${name}" is not a skill name: use <domain>.<action>, each part lowercase letters, digits ` +
      'and _ starting with a letter (e.g. email.send)'
    );
  }
  if (RESERVED_ACTIONS.includes(parts[1]!)) {
    return `"${parts[1]}" is a reserved action (${RESERVED_ACTIONS.join(', ')}); pick another file name`;
  }
  return null;
}
