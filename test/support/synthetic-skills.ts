import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

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
  const dir = mkdtempSync(path.join(os.tmpdir(), 'steward-synthetic-'));
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
