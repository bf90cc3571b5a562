import type { SkillSnapshot } from '../types.ts';
import type { UnavailableDomain } from './get-skill.ts';
import { SnapshotViews } from './snapshot-views.ts';

/** The views already made of a snapshot, by the domains they hide. */
const views = new SnapshotViews();

/**
 * The snapshot without the given domains and their skills: what a user whose provider is not
 * connected is shown (the prompt's domain list, direct-mode tools). Same object when none, and
 * the same view for the same snapshot and domains (made once, not every turn).
 */
export function hideDomains(
  snapshot: SkillSnapshot,
  unavailable: readonly UnavailableDomain[],
): SkillSnapshot {
  if (unavailable.length === 0) return snapshot;
  const hidden = new Set(unavailable.map((entry) => entry.domain));
  return views.get(snapshot, [...hidden].sort().join(' '), () => withoutDomains(snapshot, hidden));
}

function withoutDomains(snapshot: SkillSnapshot, hidden: ReadonlySet<string>): SkillSnapshot {
  return {
    version: snapshot.version,
    diagnostics: snapshot.diagnostics,
    skills: new Map([...snapshot.skills].filter(([, skill]) => !hidden.has(skill.domain))),
    domains: new Map([...snapshot.domains].filter(([domain]) => !hidden.has(domain))),
  };
}
