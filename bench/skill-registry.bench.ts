import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadSkillRoots, SkillRegistry } from '../src/skills/registry/index.ts';
import { type Bench, ms, percentile, sample } from './lib.ts';

const DOMAINS = 50;
const SKILLS_PER_DOMAIN = 20;
const LOADS = 10;
const EDITS = 10;

function skillPage(name: string, description: string): string {
  return [
    '---',
    `name: ${name}`,
    `description: ${description}`,
    'tags: [bench, generated]',
    '---',
    '',
    `# ${name}`,
    '',
    `${description}. A generated page of realistic length.`,
    '',
    '## Usage',
    '',
    `${name} --query <text> [--limit <n>]`,
    '',
    '## Flags',
    '',
    '--query    What to look for (required)',
    '--limit    Maximum results (default: 20)',
    '',
    '## Behavior',
    '',
    'Does what the description says, and reports what it did.',
    '',
    '## Examples',
    '',
    `${name} --query "something" --limit 5`,
    '',
  ].join('\n');
}

function writeTree(root: string): void {
  for (let domainIndex = 0; domainIndex < DOMAINS; domainIndex++) {
    const domain = `domain_${domainIndex}`;
    mkdirSync(path.join(root, domain));
    if (domainIndex % 2 === 0) {
      writeFileSync(
        path.join(root, domain, 'SKILL.md'),
        `---\ndomain: ${domain}\ndescription: Domain ${domainIndex}\n---\n\n# ${domain}\n`,
      );
    }
    for (let actionIndex = 0; actionIndex < SKILLS_PER_DOMAIN; actionIndex++) {
      const name = `${domain}.action_${actionIndex}`;
      writeFileSync(path.join(root, domain, `action_${actionIndex}.md`), skillPage(name, `Skill ${name}`));
    }
  }
}

const bench: Bench = async () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'steward-skill-bench-'));
  try {
    writeTree(root);
    const roots = [{ dir: root, source: 'user' as const }];
    const skillCount = loadSkillRoots(roots).skills.size;
    const loads = await sample(LOADS, () => loadSkillRoots(roots));
    // What the watcher pays per change: one file edited, the rest reused from the previous snapshot.
    let previous = loadSkillRoots(roots);
    const reloads = await sample(LOADS, (index) => {
      writeFileSync(
        path.join(root, 'domain_1', 'action_1.md'),
        skillPage('domain_1.action_1', `Reloaded ${index}`),
      );
      previous = loadSkillRoots(roots, { previous });
    });

    const registry = new SkillRegistry({ roots });
    registry.load();
    await registry.watch();
    const target = 'domain_7.action_3';
    const edits: number[] = [];
    for (let index = 0; index < EDITS; index++) {
      const description = `Edited ${index}`;
      const visible = new Promise<void>((resolve) => {
        const unsubscribe = registry.onChange((snapshot) => {
          if (snapshot.skills.get(target)?.description === description) {
            unsubscribe();
            resolve();
          }
        });
      });
      const started = performance.now();
      writeFileSync(path.join(root, 'domain_7', 'action_3.md'), skillPage(target, description));
      await visible;
      edits.push(performance.now() - started);
      // Let the watcher settle so one edit's trailing events do not feed the next sample.
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await registry.close();

    return {
      title: 'Skill registry',
      description:
        `${skillCount} skill files in ${DOMAINS} domains (half with SKILL.md) in a temp dir: cold load ` +
        `via loadSkillRoots (${LOADS} loads), reload with the previous snapshot after one edit, and ` +
        `time from writing a changed file to the change being visible through SkillRegistry.watch() (${EDITS} edits, 100 ms debounce included).`,
      columns: ['measure', 'p50', 'p95'],
      rows: [
        ['load 1,000 skills (cold)', ms(percentile(loads, 50)), ms(percentile(loads, 95))],
        ['reload after one edit', ms(percentile(reloads, 50)), ms(percentile(reloads, 95))],
        ['edit → visible via watcher', ms(percentile(edits, 50)), ms(percentile(edits, 95))],
      ],
      notes: [
        'A reload re-reads every file but re-parses only changed ones, so edit latency is about the ' +
          '100 ms debounce + one reload.',
      ],
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
};

export default bench;
