import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { renderLearnedPage } from '../../src/skills/index.ts';
import { tempDir } from './temp.ts';

const DOMAIN_WORDS = [
  'crm',
  'invoices',
  'travel',
  'recipes',
  'fitness',
  'garden',
  'music',
  'reading',
  'budget',
  'home',
];
const ACTIONS = ['search', 'get', 'list', 'create', 'update', 'archive', 'share', 'export', 'import', 'sync'];

/**
 * Writes `count` plausible skill files spread over `domains` new domains (each with a
 * SKILL.md) into a fresh temp dir and returns it. Deterministic for a given count.
 */
export function writeSyntheticSkills(count: number, domains: number): string {
  const dir = tempDir('steward-synthetic-');
  const perDomain = Math.ceil(count / domains);
  let written = 0;
  for (let d = 0; d < domains && written < count; d++) {
    const domain = `${DOMAIN_WORDS[d % DOMAIN_WORDS.length]}${d >= DOMAIN_WORDS.length ? d : ''}`;
    mkdirSync(path.join(dir, domain));
    writeFileSync(
      path.join(dir, domain, 'SKILL.md'),
      `---\ndomain: ${domain}\ndescription: ${domain} records\n---\n# ${domain}\n\nSkills for ${domain}.\n`,
    );
    for (let a = 0; a < perDomain && written < count; a++, written++) {
      const action = `${ACTIONS[a % ACTIONS.length]}${a >= ACTIONS.length ? `_${a}` : ''}`;
      const name = `${domain}.${action}`;
      writeFileSync(
        path.join(dir, domain, `${action}.md`),
        [
          '---',
          `name: ${name}`,
          `description: ${action.replaceAll('_', ' ')} ${domain} entries by id, owner or date`,
          'tags: [synthetic]',
          '---',
          `# ${name}`,
          '',
          '## Usage',
          '',
          `${name} --id <id> [--owner <name>] [--since <date>]`,
          '',
          '## Flags',
          '',
          '--id      The entry id (required)',
          '--owner   Filter by owner',
          '--since   Only entries on or after this date',
          '',
        ].join('\n'),
      );
    }
  }
  return dir;
}

const LEARNED_DOMAINS = ['travel', 'garden', 'music', 'budget', 'home'];
/** Built-in domains learned skills also land in (their index is hand-written: no new line). */
const BUILTIN_DOMAINS = ['tasks', 'email', 'calendar'];

/**
 * Writes `count` learned skills of `owner` (pages as skills.write writes them) into a fresh temp
 * dir and returns it with the new domains they introduce: spread over 5 new domains and 3
 * built-in ones. Deterministic for a given count.
 */
export function writeLearnedSkills(count: number, owner: string): { dir: string; newDomains: string[] } {
  const dir = tempDir('steward-learned-');
  const domains = [...LEARNED_DOMAINS, ...BUILTIN_DOMAINS];
  for (let index = 0; index < count; index++) {
    const domain = domains[index % domains.length]!;
    const action = `routine_${index}`;
    const name = `${domain}.${action}`;
    const body = [
      `# ${name}`,
      '',
      `The ${action.replace('_', ' ')} procedure for ${domain}, as the user taught it.`,
      '',
      '## Usage',
      '',
      `${name} [--when <date>]`,
      '',
      '## Flags',
      '',
      '--when  The day to do it for (default today)',
      '',
      '## Behavior',
      '',
      '1. Look up what is open with tasks.search --status todo.',
      '2. Do the steps the user described, one skill at a time.',
    ].join('\n');
    mkdirSync(path.join(dir, domain), { recursive: true });
    writeFileSync(
      path.join(dir, domain, `${action}.md`),
      renderLearnedPage(
        {
          name,
          description: `${action.replace('_', ' ')} for ${domain}, learned from the user`,
          owner,
          author: 'steward',
          learnedFrom: `turn-${index}`,
          learnedAt: '2026-11-27T10:00:00.000Z',
        },
        body,
      ),
    );
  }
  return { dir, newDomains: LEARNED_DOMAINS.slice(0, Math.min(count, LEARNED_DOMAINS.length)) };
}
