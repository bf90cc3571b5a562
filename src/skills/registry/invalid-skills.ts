import path from 'node:path';
import type { SkillSnapshot } from '../types.ts';

export type InvalidSkill = { name: string; path: string; reason: string };

/**
 * Skill files that failed validation and are not loaded (no last valid version): by the name
 * their path gives them (`<root>/<domain>/<action>.md` → `domain.action`), with the first error.
 */
export function invalidSkills(snapshot: SkillSnapshot): Map<string, InvalidSkill> {
  const found = new Map<string, InvalidSkill>();
  for (const diagnostic of snapshot.diagnostics) {
    if (diagnostic.severity !== 'error' || !diagnostic.path.endsWith('.md')) continue;
    const action = path.basename(diagnostic.path, '.md');
    if (action === 'SKILL') continue;
    const name = `${path.basename(path.dirname(diagnostic.path))}.${action}`;
    if (snapshot.skills.has(name) || found.has(name)) continue;
    found.set(name, { name, path: diagnostic.path, reason: diagnostic.message });
  }
  return found;
}
