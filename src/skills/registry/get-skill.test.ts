import { afterAll, describe, expect, it } from 'vitest';
import type { SkillSnapshot } from '../types.ts';
import { getSkill, skillHelp } from './get-skill.ts';
import { loadSkillRoots } from './load-skill-roots.ts';
import { removeSkillTree, skillFile, writeSkillTree } from './write-skill-tree.ts';

const files: Record<string, string> = {
  'email/SKILL.md': [
    '---',
    'domain: email',
    'description: Email tools for Gmail integration',
    '---',
    '',
    '# Email',
    '',
    '| Skill | Description |',
    '|---|---|',
    '| email.send | Send an email |',
    '| email.search | Search emails |',
  ].join('\n'),
  'email/send.md': skillFile(
    'name: email.send\ndescription: Send an email to one or more recipients\ntags: [communication]',
    '# email.send\n\nSend via Gmail.\n\n## Usage\n\nemail.send --to <addresses>',
  ),
  'email/search.md': skillFile(
    'name: email.search\ndescription: Search emails by query, sender, date range\nreadonly: true',
    '# email.search\n\nFind emails.',
  ),
  'email/archive.md': skillFile(
    'name: email.archive\ndescription: Archive an email thread',
    '# email.archive',
  ),
  'tasks/create.md': skillFile(
    'name: tasks.create\ndescription: Create a new task with a due date\ntags: [todo, email]',
    '# tasks.create',
  ),
  'tasks/search.md': skillFile(
    'name: tasks.search\ndescription: Search and filter tasks\nreadonly: true',
    '# tasks.search',
  ),
  'drive/find.md': skillFile('name: drive.find\ndescription: Find files and send them', '# drive.find'),
  'drive/share.md': skillFile('name: drive.share\ndescription: Share a file\ntags: [send]', '# drive.share'),
  'calendar/SKILL.md': '---\ndescription: Google Calendar events\n---\n# Calendar\n\nNo skills yet.',
};

const root = writeSkillTree(files);
const snapshot: SkillSnapshot = loadSkillRoots([{ dir: root, source: 'builtin' }]);
afterAll(() => removeSkillTree(root));

describe('getSkill', () => {
  it('lists domains sorted, one "name — description" line each, with a hint on going deeper', () => {
    const result = getSkill(snapshot);
    expect(result.status).toBe('ok');
    expect(result.content).toBe(
      [
        'Skill domains:',
        '',
        'calendar — Google Calendar events',
        'drive — 2 skills: find, share',
        'email — Email tools for Gmail integration',
        'tasks — 2 skills: create, search',
        '',
        "Next: get_skill: <domain> for its skills, get_skill: <domain>.<action> for one skill's page, " +
          'get_skill: <domain>.all for every page of a domain, get_skill --search "words" to search.',
      ].join('\n'),
    );
    expect(getSkill(snapshot, { path: '  ' })).toEqual(result);
  });

  it('returns the SKILL.md body for a domain, adding skills the page does not mention', () => {
    expect(getSkill(snapshot, { path: 'email' })).toEqual({
      status: 'ok',
      content: [
        '# Email',
        '',
        '| Skill | Description |',
        '|---|---|',
        '| email.send | Send an email |',
        '| email.search | Search emails |',
        '',
        '## Also available',
        '',
        '- email.archive — Archive an email thread',
      ].join('\n'),
    });
    expect(getSkill(snapshot, { path: 'calendar' }).content).toBe('# Calendar\n\nNo skills yet.');
    expect(getSkill(snapshot, { path: 'email.help' })).toEqual(getSkill(snapshot, { path: 'email' }));
  });

  it('returns the generated index for a domain without SKILL.md', () => {
    expect(getSkill(snapshot, { path: 'tasks' }).content).toBe(
      '# tasks\n\n## Available Skills\n\n- tasks.create — Create a new task with a due date\n- tasks.search — Search and filter tasks',
    );
  });

  it('returns a skill page with a header line naming it and whether it mutates', () => {
    expect(getSkill(snapshot, { path: 'email.send' })).toEqual({
      status: 'ok',
      content:
        'email.send (mutating, asks for confirmation)\n\n# email.send\n\nSend via Gmail.\n\n## Usage\n\nemail.send --to <addresses>',
    });
    expect(getSkill(snapshot, { path: 'Email.Search' }).content).toBe(
      'email.search (read-only)\n\n# email.search\n\nFind emails.',
    );
    expect(skillHelp(snapshot, 'email.send')).toEqual(getSkill(snapshot, { path: 'email.send' }));
  });

  it('concatenates every page of a domain for <domain>.all, sorted by name', () => {
    const content = getSkill(snapshot, { path: 'email.all' }).content;
    expect(content.split('\n\n---\n\n')).toEqual([
      'email.archive (mutating, asks for confirmation)\n\n# email.archive',
      getSkill(snapshot, { path: 'email.search' }).content,
      getSkill(snapshot, { path: 'email.send' }).content,
    ]);
    expect(getSkill(snapshot, { path: 'calendar.all' })).toEqual({
      status: 'ok',
      content: 'The calendar domain has no skills yet.',
    });
  });

  it('answers an unknown skill or domain with an error naming the closest names and how to list domains', () => {
    expect(getSkill(snapshot, { path: 'email.sned' })).toEqual({
      status: 'error',
      content:
        'Unknown skill "email.sned". Closest: email.send, email.search, email.archive. ' +
        'Run get_skill with no argument to list the domains.',
    });
    expect(getSkill(snapshot, { path: 'emial' })).toEqual({
      status: 'error',
      content:
        'Unknown skill domain "emial". Closest: email, drive, tasks. Run get_skill with no argument to list the domains.',
    });
    expect(getSkill(snapshot, { path: 'nope.all' }).status).toBe('error');
    expect(getSkill(snapshot, { path: 'email.send.now' }).status).toBe('error');
    expect(skillHelp(snapshot, 'tasks.creat')).toMatchObject({
      status: 'error',
      content: expect.stringContaining('tasks.create'),
    });
  });

  it('searches names, then descriptions, then tags, ties by name', () => {
    expect(getSkill(snapshot, { search: 'email' }).content).toBe(
      [
        'Skills matching "email":',
        '',
        // name hits, sorted by name
        'email.archive — Archive an email thread',
        'email.search — Search emails by query, sender, date range',
        'email.send — Send an email to one or more recipients',
        // tag hit only
        'tasks.create — Create a new task with a due date',
      ].join('\n'),
    );
    // More words matched ranks higher within a field; case and plurals do not matter.
    expect(getSkill(snapshot, { search: 'SEARCH Tasks' }).content.split('\n').slice(2)).toEqual([
      'tasks.search — Search and filter tasks',
      'email.search — Search emails by query, sender, date range',
      'tasks.create — Create a new task with a due date',
    ]);
    expect(getSkill(snapshot, { search: 'send' }).content.split('\n').slice(2)).toEqual([
      'email.send — Send an email to one or more recipients',
      'drive.find — Find files and send them',
      'drive.share — Share a file',
    ]);
    expect(getSkill(snapshot, { search: 'due' }).content.split('\n').slice(2)).toEqual([
      'tasks.create — Create a new task with a due date',
    ]);
    expect(getSkill(snapshot, { search: 'communication' }).content.split('\n').slice(2)).toEqual([
      'email.send — Send an email to one or more recipients',
    ]);
  });

  it('answers a search with no match as ok, pointing at the domain list', () => {
    expect(getSkill(snapshot, { search: 'weather forecast' })).toEqual({
      status: 'ok',
      content: 'No skills match "weather forecast". Run get_skill with no argument to list the domains.',
    });
  });

  it('gives the same text for the same skills however the files were written', () => {
    const reversed = writeSkillTree(Object.fromEntries(Object.entries(files).reverse()));
    try {
      const other = loadSkillRoots([{ dir: reversed, source: 'builtin' }]);
      for (const request of [
        {},
        { path: 'email' },
        { path: 'tasks' },
        { path: 'email.all' },
        { search: 'email search' },
      ]) {
        expect(getSkill(other, request)).toEqual(getSkill(snapshot, request));
      }
    } finally {
      removeSkillTree(reversed);
    }
  });
});
