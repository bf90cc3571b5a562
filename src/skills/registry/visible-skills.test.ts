import { afterAll, describe, expect, it } from 'vitest';
import { getSkill } from './get-skill.ts';
import { loadSkillRoots } from './load-skill-roots.ts';
import { skillsVisibleTo } from './visible-skills.ts';
import { removeSkillTree, skillFile, writeSkillFile, writeSkillTree } from './write-skill-tree.ts';

const root = writeSkillTree({
  'workflows/SKILL.md': [
    '---',
    'domain: workflows',
    'description: Workflows',
    '---',
    '',
    '| Skill | Description |',
    '|---|---|',
    '| workflows.shared_one | Shared |',
    '| workflows.alice_plan | Alice only |',
  ].join('\n'),
  'workflows/shared_one.md': skillFile('name: workflows.shared_one\ndescription: Shared'),
  'workflows/alice_plan.md': skillFile(
    'name: workflows.alice_plan\ndescription: Alice only\nowner: alice\ncolour: red',
  ),
  // A domain with no SKILL.md whose only skill is alice's: its generated index names it.
  'garden/water.md': skillFile('name: garden.water\ndescription: Water the roses\nowner: alice'),
});
const builtin = writeSkillTree({
  'workflows/digest.md': skillFile('name: workflows.digest\ndescription: The shipped digest'),
});
// Alice scheduled the shipped digest: her copy replaces it, for her.
writeSkillFile(
  root,
  'workflows/digest.md',
  skillFile('name: workflows.digest\ndescription: Alice digest at 7\nowner: alice\nschedule: "0 7 * * *"'),
);
const snapshot = loadSkillRoots([
  { dir: builtin, source: 'builtin' },
  { dir: root, source: 'user' },
]);
afterAll(() => {
  removeSkillTree(root);
  removeSkillTree(builtin);
});

describe('skillsVisibleTo', () => {
  it('keeps shared skills and the owner’s own; the same view object for the same snapshot and user', () => {
    const alice = skillsVisibleTo(snapshot, 'alice');
    expect(alice).toBe(snapshot);
    const bob = skillsVisibleTo(snapshot, 'bob');
    expect(skillsVisibleTo(snapshot, 'bob')).toBe(bob);
    expect([...bob.skills.keys()]).toEqual(['workflows.digest', 'workflows.shared_one']);
    expect(bob.version).toBe(snapshot.version);
  });

  it('drops the hidden skill’s lines from a written domain page, and a generated domain left empty', () => {
    const bob = skillsVisibleTo(snapshot, 'bob');
    const page = getSkill(bob, { path: 'workflows' }).content;
    expect(page).toContain('workflows.shared_one');
    expect(page).not.toContain('alice_plan');
    expect(bob.domains.has('garden')).toBe(false);
    expect(getSkill(bob, {}).content).not.toContain('garden');
    expect(snapshot.domains.get('garden')?.description).toContain('water');
  });

  it('shows other users the built-in an owned file replaced, and its owner their copy', () => {
    const bob = skillsVisibleTo(snapshot, 'bob');
    expect(bob.skills.get('workflows.digest')).toMatchObject({
      source: 'builtin',
      description: 'The shipped digest',
    });
    expect(bob.skills.get('workflows.digest')?.schedule).toBeUndefined();
    const page = getSkill(bob, { path: 'workflows' }).content;
    expect(page).toContain('workflows.digest — The shipped digest');
    expect(page).not.toContain('Alice digest');
    expect(skillsVisibleTo(snapshot, 'alice').skills.get('workflows.digest')?.description).toBe(
      'Alice digest at 7',
    );
  });

  it('drops diagnostics about the hidden files', () => {
    const about = (view: typeof snapshot) =>
      view.diagnostics.filter((diagnostic) => diagnostic.path.endsWith('alice_plan.md'));
    expect(about(snapshot).length).toBeGreaterThan(0);
    expect(about(skillsVisibleTo(snapshot, 'bob'))).toEqual([]);
  });
});
