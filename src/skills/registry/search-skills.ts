import type { SkillDefinition, SkillSnapshot } from '../types.ts';

export type SkillMatch = {
  skill: SkillDefinition;
  /** The best field a query word matched: name beats description beats tags. */
  field: 'name' | 'description' | 'tags';
  /** How many distinct query words matched anywhere. */
  matchedWords: number;
};

const FIELD_RANK = { name: 0, description: 1, tags: 2 } as const;
const STOP_WORDS: ReadonlySet<string> = new Set([
  'a',
  'an',
  'and',
  'by',
  'for',
  'from',
  'in',
  'of',
  'on',
  'or',
  'the',
  'to',
  'with',
]);

/**
 * Skills whose name, description or tags contain a query word (case-insensitive, whole
 * words, a plural `s` ignored). Ranked by best field, then words matched, then name.
 */
export function searchSkills(snapshot: SkillSnapshot, query: string): SkillMatch[] {
  const all = words(query);
  const meaningful = all.filter((word) => !STOP_WORDS.has(word));
  const queryWords = new Set(meaningful.length > 0 ? meaningful : all);
  if (queryWords.size === 0) return [];

  const matches: SkillMatch[] = [];
  for (const skill of snapshot.skills.values()) {
    const name = hits(queryWords, words(skill.name));
    const description = hits(queryWords, words(skill.description));
    const tags = hits(queryWords, skill.tags.flatMap(words));
    const matched = new Set([...name, ...description, ...tags]).size;
    if (matched === 0) continue;
    const field = name.length > 0 ? 'name' : description.length > 0 ? 'description' : 'tags';
    matches.push({ skill, field, matchedWords: matched });
  }
  return matches.sort(
    (a, b) =>
      FIELD_RANK[a.field] - FIELD_RANK[b.field] ||
      b.matchedWords - a.matchedWords ||
      (a.skill.name < b.skill.name ? -1 : a.skill.name > b.skill.name ? 1 : 0),
  );
}

function hits(queryWords: ReadonlySet<string>, fieldWords: string[]): string[] {
  return [...new Set(fieldWords)].filter((word) => queryWords.has(word));
}

function words(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 0)
    .map((word) =>
      word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word,
    );
}
