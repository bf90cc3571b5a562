import type { DomainIndex, SkillDefinition, SkillSnapshot } from '../types.ts';
import { generatedIndex } from './load-skill-roots.ts';
import { SnapshotViews } from './snapshot-views.ts';

const views = new SnapshotViews();

/**
 * The snapshot as `userId` may see it: a skill whose frontmatter names another `owner` (another
 * user's workflow) is absent — from lookups, listings, search, suggestions and execution alike,
 * so asking for it reads exactly like asking for a skill that does not exist. Skills without
 * `owner` are shared; where an owned file replaced a built-in, others see the built-in. Domain
 * pages lose the lines naming hidden skills; a generated domain index is rebuilt from what is left. Same object when nothing is hidden; cached per snapshot and user.
 */
export function skillsVisibleTo(snapshot: SkillSnapshot, userId: string): SkillSnapshot {
  return views.get(snapshot, userId, () => buildView(snapshot, userId));
}

/** The skills every user sees (no owned file; a built-in an owned file replaced): shared indexes. */
export function sharedSkills(snapshot: SkillSnapshot): SkillDefinition[] {
  return [...snapshot.skills.values()].flatMap((skill) => {
    const shared = skill.owner === undefined ? skill : skill.shadows;
    return shared && shared.owner === undefined ? [shared] : [];
  });
}

/** Whether `userId` may see and run `skill`: it is shared (no `owner`) or theirs. */
export function isVisibleTo(skill: SkillDefinition, userId: string): boolean {
  return skill.owner === undefined || skill.owner === userId;
}

function buildView(snapshot: SkillSnapshot, userId: string): SkillSnapshot {
  const hidden = [...snapshot.skills.values()].filter((skill) => !isVisibleTo(skill, userId));
  if (hidden.length === 0) return snapshot;
  const hiddenNames = new Set(hidden.map((skill) => skill.name));
  const hiddenPaths = new Set(hidden.map((skill) => skill.path));
  const skills = new Map<string, SkillDefinition>();
  for (const [name, skill] of snapshot.skills) {
    if (!hiddenNames.has(name)) skills.set(name, skill);
    else if (skill.shadows && isVisibleTo(skill.shadows, userId)) skills.set(name, skill.shadows);
  }
  const touchedDomains = new Set(hidden.map((skill) => skill.domain));
  const domains = new Map<string, DomainIndex>();
  for (const [domain, index] of snapshot.domains) {
    if (!touchedDomains.has(domain)) {
      domains.set(domain, index);
      continue;
    }
    const left = [...skills.values()].filter((skill) => skill.domain === domain);
    if (index.generated) {
      if (left.length > 0) domains.set(domain, { ...generatedIndex(domain, left), ...unavailableOf(index) });
      continue;
    }
    domains.set(domain, { ...index, body: withoutLinesNaming(index.body, hidden) });
  }
  return Object.freeze({
    version: snapshot.version,
    skills,
    domains,
    diagnostics: snapshot.diagnostics.filter((diagnostic) => !hiddenPaths.has(diagnostic.path)),
  });
}

function unavailableOf(index: DomainIndex): Partial<DomainIndex> {
  return index.unavailable === undefined ? {} : { unavailable: index.unavailable };
}

// A hand-written or workflow.build-written SKILL.md lists skills one per line (a table row or
// a bullet): dropping the lines that name a hidden skill drops its row. A built-in shown in its
// place comes back under get_skill's "Also available", with its own description.
function withoutLinesNaming(body: string, hidden: readonly SkillDefinition[]): string {
  const patterns = hidden.map(
    (skill) => new RegExp(`(^|[^a-z0-9_.])${skill.name.replace('.', '\\.')}($|[^a-z0-9_])`, 'i'),
  );
  return body
    .split('\n')
    .filter((line) => !patterns.some((pattern) => pattern.test(line)))
    .join('\n');
}
