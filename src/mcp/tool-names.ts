const RESERVED = new Set(['all', 'help']);

/**
 * The skill action an MCP tool becomes. A valid action name stays as it is; any other is
 * lower-cased with every other character turned into `_` (`Add-Note` → `add_note`), prefixed
 * when it does not start with a letter, and numbered when two tools of a server would collide.
 */
export function actionNameFor(tool: string, taken: ReadonlySet<string>): string {
  let base = tool.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  if (!/^[a-z]/.test(base)) base = `tool_${base}`;
  if (RESERVED.has(base)) base = `${base}_tool`;
  let name = base;
  for (let suffix = 2; taken.has(name); suffix++) name = `${base}_${suffix}`;
  return name;
}

/**
 * A JSON Schema property name as a flag (`dueDate` → `due-date`), and the key the command
 * parser files that flag under (`due_date`).
 */
export function flagNameFor(property: string): { flag: string; key: string } {
  const dashed = property
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1-$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  const flag = /^[a-z0-9]/.test(dashed) ? dashed : `arg-${dashed || 'value'}`;
  return { flag, key: flag.replaceAll('-', '_') };
}
