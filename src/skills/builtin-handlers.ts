import type { SkillHandler } from './types.ts';

/**
 * Every built-in handler, registered under its skill name, loaded on the first call rather than
 * with this folder: the handlers reach into every domain (files, email, calendar, the web), and
 * most commands that use the skills folder (`steward doctor`, `steward skills list`) run none.
 */
export async function loadBuiltinHandlers(): Promise<Map<string, SkillHandler>> {
  return (await import('./handlers/index.ts')).builtinHandlers();
}
