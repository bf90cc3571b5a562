import type { SkillDefinition, SkillResult, SkillSnapshot } from '../types.ts';
import { fail, ok } from '../types.ts';
import { closestDomains, closestSkills } from './closest-skills.ts';
import { searchSkills } from './search-skills.ts';

export type GetSkillRequest = {
  /** `email`, `email.send` or `email.all`; absent for the domain list. */
  path?: string;
  /** Words to search skill names, descriptions and tags for. Takes precedence over `path`. */
  search?: string;
};

/** A domain whose provider is not connected for this user, and how to connect it. */
export type UnavailableDomain = { domain: string; reason: string };

const SEARCH_LIMIT = 20;
const LIST_DOMAINS = 'Run get_skill with no argument to list the domains.';
const HOW_TO_GO_DEEPER =
  "Next: get_skill: <domain> for its skills, get_skill: <domain>.<action> for one skill's page, " +
  'get_skill: <domain>.all for every page of a domain, get_skill --search "words" to search.';

/**
 * `get_skill` at every level (DESIGN §4, seed 001 §3.3): domain list, domain index, skill
 * page, a domain's every page, or a search. Unknown names are error results naming the
 * closest ones. Output is sorted, so the same snapshot always gives the same text.
 */
export function getSkill(
  snapshot: SkillSnapshot,
  request: GetSkillRequest = {},
  unavailable: readonly UnavailableDomain[] = [],
): SkillResult {
  const search = request.search?.trim();
  if (search) return searchResult(snapshot, search);
  const target = request.path?.trim().toLowerCase() ?? '';
  if (target === '') return domainList(snapshot, unavailable);
  const blocked = unavailable.find((entry) => entry.domain === target.split('.')[0]);
  if (blocked && snapshot.domains.has(blocked.domain)) {
    const page = getSkill(snapshot, request);
    return ok(`Not available yet: ${blocked.reason}\n\n${page.content}`, {
      metadata: { unavailable: blocked.domain },
    });
  }

  const parts = target.split('.');
  if (parts.length === 1) return domainPage(snapshot, target);
  if (parts.length === 2 && (parts[1] === 'all' || parts[1] === 'help') && snapshot.domains.has(parts[0]!)) {
    return parts[1] === 'all' ? domainAll(snapshot, parts[0]!) : domainPage(snapshot, parts[0]!);
  }
  return skillHelp(snapshot, target);
}

/** `NAME --help`: the skill's page, or an error naming the closest skills. */
export function skillHelp(snapshot: SkillSnapshot, name: string): SkillResult {
  const skill = snapshot.skills.get(name.trim().toLowerCase());
  if (skill) return ok(skillPage(skill));
  return fail(`Unknown skill "${name.trim()}".${suggestion(closestSkills(snapshot, name))} ${LIST_DOMAINS}`);
}

/** The page served for one skill: a header line (name, read-only or mutating), then its body. */
export function skillPage(skill: SkillDefinition): string {
  const mode = skill.readonly ? 'read-only' : skill.confirm ? 'mutating, asks for confirmation' : 'mutating';
  const body = skill.body.trim() || `${skill.description}\n\nUsage: ${skill.usage}`;
  return `${skill.name} (${mode})\n\n${body}`;
}

function domainList(snapshot: SkillSnapshot, unavailable: readonly UnavailableDomain[]): SkillResult {
  if (snapshot.domains.size === 0) return ok('No skills are installed.');
  const blocked = new Set(unavailable.map((entry) => entry.domain));
  const domains = [...snapshot.domains.values()].sort((a, b) => compare(a.domain, b.domain));
  const lines = domains
    .filter((index) => !blocked.has(index.domain))
    .map((index) => `${index.domain} — ${index.description}`);
  const notConnected = domains.filter((index) => blocked.has(index.domain)).map((index) => index.domain);
  const extra = notConnected.length
    ? [
        '',
        `Not connected for this user: ${notConnected.join(', ')} (get_skill: <domain> says how to connect).`,
      ]
    : [];
  return ok(['Skill domains:', '', ...lines, ...extra, '', HOW_TO_GO_DEEPER].join('\n'));
}

function domainPage(snapshot: SkillSnapshot, domain: string): SkillResult {
  const index = snapshot.domains.get(domain);
  if (!index) return unknownDomain(snapshot, domain);
  // A hand-written SKILL.md can lag behind its folder: list the skills it never mentions.
  const unlisted = domainSkills(snapshot, domain).filter((skill) => !mentions(index.body, skill.name));
  if (index.generated || unlisted.length === 0) return ok(index.body);
  const extra = unlisted.map((skill) => `- ${skill.name} — ${skill.description}`);
  return ok([index.body, '', '## Also available', '', ...extra].join('\n'));
}

function domainAll(snapshot: SkillSnapshot, domain: string): SkillResult {
  const skills = domainSkills(snapshot, domain);
  if (skills.length === 0) return ok(`The ${domain} domain has no skills yet.`);
  return ok(skills.map(skillPage).join('\n\n---\n\n'));
}

function searchResult(snapshot: SkillSnapshot, query: string): SkillResult {
  const matches = searchSkills(snapshot, query);
  if (matches.length === 0) return ok(`No skills match "${query}". ${LIST_DOMAINS}`);
  const shown = matches.slice(0, SEARCH_LIMIT).map(({ skill }) => `${skill.name} — ${skill.description}`);
  const more =
    matches.length > SEARCH_LIMIT ? [`…and ${matches.length - SEARCH_LIMIT} more; narrow the search.`] : [];
  return ok([`Skills matching "${query}":`, '', ...shown, ...more].join('\n'));
}

function unknownDomain(snapshot: SkillSnapshot, domain: string): SkillResult {
  return fail(
    `Unknown skill domain "${domain}".${suggestion(closestDomains(snapshot, domain))} ${LIST_DOMAINS}`,
  );
}

function domainSkills(snapshot: SkillSnapshot, domain: string): SkillDefinition[] {
  return [...snapshot.skills.values()]
    .filter((skill) => skill.domain === domain)
    .sort((a, b) => compare(a.name, b.name));
}

function mentions(body: string, name: string): boolean {
  return new RegExp(`(^|[^a-z0-9_.])${name.replace('.', '\\.')}($|[^a-z0-9_])`).test(body);
}

function suggestion(names: string[]): string {
  return names.length > 0 ? ` Closest: ${names.join(', ')}.` : '';
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
