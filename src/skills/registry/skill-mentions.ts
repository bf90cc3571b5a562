import type { SkillSnapshot } from '../types.ts';
import { closestSkills } from './closest-skills.ts';

// `domain.action` as a word of its own: not inside a URL, an address or a dotted name
// (`example.com/x`, `a@b.co`, `v1.2.3`); one-letter segments (`e.g.`, `i.e.`) are prose.
const MENTION = /(?<![\w@/.:-])([a-z][a-z0-9_]*)\.([a-z][a-z0-9_]*)(?![\w-]|\.\w)/g;

/** Every `domain.action` token in free text, in order of first appearance, once each. */
export function skillMentions(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(MENTION)) {
    const [name, domain, action] = match as unknown as [string, string, string];
    if (domain.length < 2 || action.length < 2) continue;
    if (!found.includes(name)) found.push(name);
  }
  return found;
}

/** The skills a text names, split into known ones and unknown ones with their closest names. */
export function checkSkillMentions(
  text: string,
  snapshot: SkillSnapshot,
): { known: string[]; unknown: Array<{ name: string; closest: string[] }> } {
  const known: string[] = [];
  const unknown: Array<{ name: string; closest: string[] }> = [];
  for (const name of skillMentions(text)) {
    if (snapshot.skills.has(name)) known.push(name);
    else unknown.push({ name, closest: closestSkills(snapshot, name) });
  }
  return { known, unknown };
}
