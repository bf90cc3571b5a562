import { distance as levenshtein } from 'fastest-levenshtein';
import type { SkillSnapshot } from '../types.ts';

// A shared domain or action counts as this many edits saved: `email.compose` should
// suggest other email skills, `mail.send` should suggest `email.send`.
const SHARED_SEGMENT_BONUS = 2;

/**
 * The `count` skill names nearest to `name` by Levenshtein distance, favouring skills that
 * share its domain or its action. Ties are broken by name, so the answer is deterministic.
 */
export function closestSkills(snapshot: SkillSnapshot, name: string, count = 3): string[] {
  const wanted = name.trim().toLowerCase();
  const dot = wanted.indexOf('.');
  const domain = dot === -1 ? null : wanted.slice(0, dot);
  const action = dot === -1 ? null : wanted.slice(dot + 1);
  const scored = [...snapshot.skills.values()].map((skill) => {
    let score = levenshtein(wanted, skill.name);
    if (domain === null) {
      // A bare word may be a domain (`emial`) or an action (`send`).
      score = Math.min(score, levenshtein(wanted, skill.domain) + 1, levenshtein(wanted, skill.action) + 1);
    } else {
      if (skill.domain === domain) score -= SHARED_SEGMENT_BONUS;
      if (skill.action === action) score -= SHARED_SEGMENT_BONUS;
    }
    return { name: skill.name, score };
  });
  return rank(scored, count);
}

/** The `count` domain names nearest to `name`, ties broken by name. */
export function closestDomains(snapshot: SkillSnapshot, name: string, count = 3): string[] {
  const wanted = name.trim().toLowerCase();
  return rank(
    [...snapshot.domains.keys()].map((domain) => ({ name: domain, score: levenshtein(wanted, domain) })),
    count,
  );
}

function rank(scored: Array<{ name: string; score: number }>, count: number): string[] {
  return scored
    .sort((a, b) => a.score - b.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .slice(0, Math.max(0, count))
    .map((entry) => entry.name);
}
