import type { SkillSnapshot } from '../types.ts';
import type { UnavailableDomain } from './get-skill.ts';

/**
 * The snapshot without the given domains and their skills: what a user whose provider is not
 * connected is shown (the prompt's domain list, direct-mode tools). Same object when none.
 */
export function hideDomains(
  snapshot: SkillSnapshot,
  unavailable: readonly UnavailableDomain[],
): SkillSnapshot {
  if (unavailable.length === 0) return snapshot;
  const hidden = new Set(unavailable.map((entry) => entry.domain));
  return {
    version: snapshot.version,
    diagnostics: snapshot.diagnostics,
    skills: new Map([...snapshot.skills].filter(([, skill]) => !hidden.has(skill.domain))),
    domains: new Map([...snapshot.domains].filter(([domain]) => !hidden.has(domain))),
  };
}
