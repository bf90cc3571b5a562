import { afterEach, describe, expect, it } from 'vitest';
import { getSkill } from './get-skill.ts';
import { loadSkillRoots } from './load-skill-roots.ts';
import { parseFlagsSection } from './parse-flags-section.ts';
import { skillPageSkeleton } from './skill-page-skeleton.ts';
import { validateSkillDir } from './validate-skill-dir.ts';
import { removeSkillTree, skillFile, writeSkillTree } from './write-skill-tree.ts';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) removeSkillTree(root);
});

describe('skillPageSkeleton', () => {
  it('writes a page that loads with no diagnostics and has every section', () => {
    const root = writeSkillTree({
      'notes/archive.md': skillPageSkeleton('notes.archive'),
      'notes/search.md': skillPageSkeleton('notes.search'),
    });
    roots.push(root);
    const snapshot = loadSkillRoots([{ dir: root, source: 'user' }]);
    expect(snapshot.diagnostics).toEqual([]);
    expect(snapshot.skills.get('notes.archive')).toMatchObject({
      readonly: false,
      usage: 'notes.archive --example <value>',
    });
    // Never guessed from the name: the page says mutating until its author says otherwise.
    expect(snapshot.skills.get('notes.search')).toMatchObject({ readonly: false });
    const page = getSkill(snapshot, { path: 'notes.archive' }).content;
    for (const heading of ['# notes.archive', '## Usage', '## Flags', '## Behavior', '## Examples']) {
      expect(page).toContain(`\n${heading}\n`);
    }
    expect(parseFlagsSection(snapshot.skills.get('notes.archive')!.body)).toEqual([
      { name: 'example', required: true, description: 'Describe this flag (required)' },
    ]);
  });

  it('refuses an invalid name', () => {
    expect(() => skillPageSkeleton('notes')).toThrow(/not a skill name/);
    expect(() => skillPageSkeleton('notes.all')).toThrow(/reserved action/);
  });
});

describe('validateSkillDir', () => {
  it('returns every diagnostic of one root', () => {
    const root = writeSkillTree({
      'email/send.md': skillFile('name: email.send'),
      'email/read.md': skillFile('name: email.read\ndescription: Read\ncolour: blue'),
    });
    roots.push(root);
    expect(validateSkillDir(root)).toEqual([
      expect.objectContaining({ path: `${root}/email/read.md`, severity: 'warning' }),
      { path: `${root}/email/send.md`, severity: 'error', message: 'missing required field "description"' },
    ]);
  });

  it('reports a directory that does not exist', () => {
    expect(validateSkillDir('/nonexistent/steward-skills')).toEqual([
      { path: '/nonexistent/steward-skills', severity: 'error', message: 'not a directory' },
    ]);
  });
});
