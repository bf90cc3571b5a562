import type { Diagnostic, DomainIndex, ProvidedSkills, SkillDefinition, SkillSnapshot } from '../types.ts';

/**
 * The snapshot readers see: the skill files' snapshot plus what providers (MCP servers)
 * contribute. A provided domain never replaces a built-in one (configuration rejects that
 * earlier; here it is skipped with an error diagnostic); it replaces a user domain of the same
 * name, with a warning, so one domain never mixes files and server tools.
 */
export function mergeProvided(
  files: SkillSnapshot,
  provided: readonly ProvidedSkills[],
  version: number,
): SkillSnapshot {
  const skills = new Map(files.skills);
  const domains = new Map(files.domains);
  const diagnostics: Diagnostic[] = [...files.diagnostics];
  for (const contribution of provided) {
    diagnostics.push(...(contribution.diagnostics ?? []));
    const taken = new Set<string>();
    for (const index of contribution.domains) {
      const existing = files.domains.get(index.domain);
      if (existing && existing.source === 'builtin') {
        diagnostics.push({
          path: `mcp:${index.domain}`,
          severity: 'error',
          message: `"${index.domain}" is a built-in skill domain, so this provider's skills are ignored`,
        });
        continue;
      }
      if (existing) {
        for (const skill of files.skills.values())
          if (skill.domain === index.domain) skills.delete(skill.name);
        diagnostics.push({
          path: existing.path ?? `mcp:${index.domain}`,
          severity: 'warning',
          message: `the ${index.domain} domain comes from an MCP server, so user skill files of that domain are hidden`,
        });
      }
      domains.set(index.domain, index);
      taken.add(index.domain);
    }
    for (const skill of contribution.skills) if (taken.has(skill.domain)) skills.set(skill.name, skill);
  }
  if (provided.every((contribution) => contribution.domains.length === 0) && files.version === version)
    return files;
  return Object.freeze({
    version,
    skills: sortedMap<SkillDefinition>(skills),
    domains: sortedMap<DomainIndex>(domains),
    diagnostics: Object.freeze(diagnostics),
  });
}

function sortedMap<Value>(map: Map<string, Value>): Map<string, Value> {
  return new Map([...map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
