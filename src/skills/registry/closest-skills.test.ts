import { afterAll, describe, expect, it } from 'vitest';
import { closestDomains, closestSkills } from './closest-skills.ts';
import { loadSkillRoots } from './load-skill-roots.ts';
import { removeSkillTree, skillFile, writeSkillTree } from './write-skill-tree.ts';

const names = [
  'email.send',
  'email.search',
  'email.read',
  'tasks.create',
  'tasks.search',
  'memory.save',
  'drive.read',
];
const root = writeSkillTree(
  Object.fromEntries(
    names.map((name) => [`${name.replace('.', '/')}.md`, skillFile(`name: ${name}\ndescription: ${name}`)]),
  ),
);
const snapshot = loadSkillRoots([{ dir: root, source: 'builtin' }]);
afterAll(() => removeSkillTree(root));

describe('closestSkills', () => {
  it('ranks by edit distance', () => {
    expect(closestSkills(snapshot, 'email.sned')[0]).toBe('email.send');
    expect(closestSkills(snapshot, 'taks.create')[0]).toBe('tasks.create');
  });

  it('favours skills in the same domain when the action is unknown', () => {
    expect(closestSkills(snapshot, 'email.compose')).toEqual(['email.read', 'email.search', 'email.send']);
  });

  it('favours the same action in another domain when the domain is unknown', () => {
    expect(closestSkills(snapshot, 'gmail.search', 2)).toEqual(['email.search', 'tasks.search']);
    expect(closestSkills(snapshot, 'notes.save', 1)).toEqual(['memory.save']);
  });

  it('matches a bare word against domains and actions', () => {
    expect(closestSkills(snapshot, 'memroy', 1)).toEqual(['memory.save']);
    expect(closestSkills(snapshot, 'create', 1)).toEqual(['tasks.create']);
  });

  it('breaks ties by name and honours count', () => {
    // email.read and drive.read are equally far from "x.read"; name order decides.
    expect(closestSkills(snapshot, 'x.read', 2)).toEqual(['drive.read', 'email.read']);
    expect(closestSkills(snapshot, 'email.x', 5)).toHaveLength(5);
    expect(closestSkills(snapshot, 'email.x', 0)).toEqual([]);
  });

  it('finds the closest domains', () => {
    expect(closestDomains(snapshot, 'emial', 1)).toEqual(['email']);
  });
});
