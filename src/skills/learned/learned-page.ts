import { stringify } from 'yaml';
import { scanFile } from '../import/import-risks.ts';
import { closestSkills } from '../registry/closest-skills.ts';
import { markdownSection } from '../registry/markdown-section.ts';
import { usageLine } from '../registry/parse-skill-file.ts';
import { skillMentions } from '../registry/skill-mentions.ts';
import type { SkillSnapshot } from '../types.ts';

/** Frontmatter `author` of a page an agent wrote. */
export const STEWARD_AUTHOR = 'steward';
/** Domains whose pages Steward's own skills write (workflow.build, the skills domain itself). */
export const RESERVED_DOMAINS: readonly string[] = ['skills', 'workflows'];
export const MAX_BODY_CHARS = 20_000;
export const MAX_DESCRIPTION_CHARS = 200;

/** What a learned skill's page records besides its body. */
export type LearnedPageFields = {
  name: string;
  description: string;
  owner: string;
  /** `steward` when an agent learned it, else the user who wrote it themselves. */
  author: string;
  /** The turn it was learned in, when there was one. */
  learnedFrom: string | null;
  /** ISO time it was first written. */
  learnedAt: string;
};

/**
 * The page of a learned skill: a read-only template (no handler: running it returns the body
 * for the agent to follow), owned by one user, saying who wrote it, in which turn and when.
 */
export function renderLearnedPage(fields: LearnedPageFields, body: string): string {
  const frontmatter = stringify({
    name: fields.name,
    description: fields.description,
    owner: fields.owner,
    author: fields.author,
    readonly: true,
    ...(fields.learnedFrom ? { learned_from: fields.learnedFrom } : {}),
    learned_at: fields.learnedAt,
  }).trimEnd();
  return `---\n${frontmatter}\n---\n\n${body.trim()}\n`;
}

/** The body as given, with a `# name` title and the description first when it has no title. */
export function normalizedBody(name: string, description: string, body: string): string {
  const text = body.replace(/\r\n?/g, '\n').trim();
  return /^#\s/.test(text) ? text : `# ${name}\n\n${description}\n\n${text}`;
}

/**
 * What is wrong with a learned page's description and body, as fixes the model can act on:
 * the skill format (`## Usage` starting with the name, `## Behavior`), sizes, and skills it
 * names that do not exist (a typo in a known domain) or that change skills.
 */
export function learnedPageProblems(
  name: string,
  description: string,
  body: string,
  visible: SkillSnapshot,
): string[] {
  const problems: string[] = [];
  if (description.trim() === '') problems.push('--description is empty: say in one line what the skill does');
  if (/\n/.test(description.trim())) problems.push('--description must be one line');
  if (description.length > MAX_DESCRIPTION_CHARS)
    problems.push(
      `--description is ${description.length} characters; keep it under ${MAX_DESCRIPTION_CHARS}`,
    );
  if (body.trim() === '') {
    problems.push('--body is empty: give the page with ## Usage, ## Flags and ## Behavior sections');
    return problems;
  }
  if (body.length > MAX_BODY_CHARS)
    problems.push(`--body is ${body.length} characters; keep it under ${MAX_BODY_CHARS}`);
  if (body.trimStart().startsWith('---'))
    problems.push('--body starts with a frontmatter block: give only the markdown body');
  const usage = usageLine(body);
  if (usage === null)
    problems.push(`--body has no "## Usage" section: add one whose first line is "${name} [--flag <value>]"`);
  else if (usage !== name && !usage.startsWith(`${name} `))
    problems.push(`the first line of "## Usage" must start with ${name} (it is "${usage}")`);
  if (!markdownSection(body, 'Behavior')?.some((line) => line.trim() !== ''))
    problems.push('--body has no "## Behavior" section: add the steps to follow, naming the skills to use');
  for (const mentioned of skillMentions(body)) {
    if (mentioned === name) continue;
    const domain = mentioned.slice(0, mentioned.indexOf('.'));
    if (domain === 'skills') {
      problems.push(`the body names ${mentioned}: a learned skill cannot write, change or retire skills`);
      continue;
    }
    // A dotted word outside every known domain is prose (notes.md), not a skill.
    if (visible.skills.has(mentioned) || !visible.domains.has(domain)) continue;
    const closest = closestSkills(visible, mentioned);
    problems.push(
      `unknown skill "${mentioned}"${closest.length ? ` (closest: ${closest.join(', ')})` : ''}: name only skills that exist`,
    );
  }
  return problems;
}

/**
 * The dangerous findings in a learned page, checked like an AgentSkills import: instructions
 * to send data away or to hide actions from the user, and credentials. One line each.
 */
export function learnedPageRisks(description: string, body: string): string[] {
  return [...scanFile('description', description, false), ...scanFile('body', body, false)]
    .filter((risk) => risk.level === 'danger')
    .map((risk) => `${risk.file}${risk.line ? ` line ${risk.line}` : ''}: ${risk.detail}`);
}
