import { afterEach, describe, expect, it } from 'vitest';
import type { Diagnostic, SkillSnapshot } from '../types.ts';
import { loadSkillRoots } from './load-skill-roots.ts';
import {
  captureLogger,
  removeSkillTree,
  skillFile,
  writeSkillFile,
  writeSkillTree,
} from './write-skill-tree.ts';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) removeSkillTree(root);
});

function tree(files: Record<string, string>): string {
  const root = writeSkillTree(files);
  roots.push(root);
  return root;
}

function loadUser(files: Record<string, string>): { root: string; snapshot: SkillSnapshot } {
  const root = tree(files);
  return { root, snapshot: loadSkillRoots([{ dir: root, source: 'user' }]) };
}

function diagnosticsFor(snapshot: SkillSnapshot, relative: string): Diagnostic[] {
  return snapshot.diagnostics.filter((diagnostic) => diagnostic.path.endsWith(relative));
}

const send = skillFile(
  'name: email.send\ndescription: Send an email',
  '# email.send\n\n## Usage\n\n```\nemail.send --to <address> --subject <text>\n```\n',
);

describe('loadSkillRoots: skill files', () => {
  it('loads <root>/<domain>/<action>.md as <domain>.<action> with every optional field', () => {
    const { root, snapshot } = loadUser({
      'workflows/daily_digest.md': skillFile(
        [
          'name: workflows.daily_digest',
          'description: Send the morning digest',
          'handler: digest_runner',
          'schedule: "0 8 * * 1-5"',
          'timezone: Europe/Paris',
          'timeout: 1.5',
          'tags: [digest, morning]',
          'author: assistant',
          'created: 2026-02-17',
        ].join('\n'),
        '# workflows.daily_digest\n\nDo things.',
      ),
    });
    expect(snapshot.diagnostics).toEqual([]);
    expect(snapshot.skills.get('workflows.daily_digest')).toEqual({
      name: 'workflows.daily_digest',
      domain: 'workflows',
      action: 'daily_digest',
      description: 'Send the morning digest',
      readonly: false,
      confirm: true,
      handler: 'digest_runner',
      schedule: '0 8 * * 1-5',
      timezone: 'Europe/Paris',
      timeoutMs: 1500,
      tags: ['digest', 'morning'],
      author: 'assistant',
      created: '2026-02-17',
      body: '# workflows.daily_digest\n\nDo things.',
      usage: 'workflows.daily_digest [flags]',
      source: 'user',
      path: `${root}/workflows/daily_digest.md`,
    });
  });

  it('takes usage from the first line of ## Usage, without fences, and defaults handler to the name', () => {
    const { snapshot } = loadUser({ 'email/send.md': send });
    const skill = snapshot.skills.get('email.send')!;
    expect(skill.usage).toBe('email.send --to <address> --subject <text>');
    expect(skill.handler).toBe('email.send');
  });

  it('never guesses read-only from the action name: undeclared is mutating, and confirm = !readonly', () => {
    const files: Record<string, string> = {};
    for (const action of ['search', 'get', 'list', 'read', 'send', 'create', 'delete', 'free']) {
      files[`tasks/${action}.md`] = skillFile(`name: tasks.${action}\ndescription: ${action} tasks`);
    }
    files['tasks/archive.md'] = skillFile('name: tasks.archive\ndescription: Archive\nreadonly: true');
    files['tasks/lookup.md'] = skillFile(
      'name: tasks.lookup\ndescription: Lookup\nreadonly: true\nconfirm: true',
    );
    files['tasks/export.md'] = skillFile('name: tasks.export\ndescription: Export\nconfirm: false');
    const { snapshot } = loadUser(files);
    const modes = Object.fromEntries(
      [...snapshot.skills.values()].map((skill) => [skill.action, [skill.readonly, skill.confirm]]),
    );
    expect(modes).toEqual({
      archive: [true, false],
      create: [false, true],
      delete: [false, true],
      export: [false, false],
      free: [false, true],
      get: [false, true],
      list: [false, true],
      lookup: [true, true],
      read: [false, true],
      search: [false, true],
      send: [false, true],
    });
    const { snapshot: declared } = loadUser({
      'tasks/search.md': skillFile('name: tasks.search\ndescription: Search\nreadonly: true'),
    });
    expect(declared.skills.get('tasks.search')).toMatchObject({ readonly: true, confirm: false });
  });

  it.each([
    ['missing name', 'description: No name here', /missing required field "name"/],
    ['missing description', 'name: email.send', /missing required field "description"/],
    ['empty description', 'name: email.send\ndescription: "  "', /"description" must not be empty/],
    ['bad name format', 'name: Email-Send\ndescription: x', /bad name: "Email-Send" is not a skill name/],
    ['three-part name', 'name: email.send.now\ndescription: x', /is not a skill name/],
    [
      'name/path mismatch',
      'name: email.draft\ndescription: x',
      /name "email.draft" does not match .* "email.send"/,
    ],
    ['unparseable YAML', 'name: [email.send\ndescription: x', /unparseable YAML frontmatter/],
    ['duplicate key', 'name: email.send\nname: email.send\ndescription: x', /unparseable YAML/],
    ['non-mapping frontmatter', '- name\n- description', /must be YAML "key: value" lines/],
    ['name not text', 'name: 42\ndescription: x', /"name" must be text, not number 42/],
    [
      'readonly not boolean',
      'name: email.send\ndescription: x\nreadonly: "yes"',
      /"readonly" must be true or false/,
    ],
    [
      'confirm not boolean',
      'name: email.send\ndescription: x\nconfirm: 1',
      /"confirm" must be true or false/,
    ],
    ['tags not a list', 'name: email.send\ndescription: x\ntags: mail', /"tags" must be a list of text/],
    [
      'tags with a non-text item',
      'name: email.send\ndescription: x\ntags: [a, {b: c}]',
      /"tags" must be a list/,
    ],
    [
      'timeout not positive',
      'name: email.send\ndescription: x\ntimeout: 0',
      /"timeout" must be a positive number/,
    ],
    [
      'timeout as text',
      'name: email.send\ndescription: x\ntimeout: 30s',
      /"timeout" must be a positive number/,
    ],
    ['bad timezone', 'name: email.send\ndescription: x\ntimezone: Mars/Olympus', /not an IANA time zone/],
    [
      'handler not text',
      'name: email.send\ndescription: x\nhandler: [a]',
      /"handler" must be text, not a list/,
    ],
  ])('reports %s as an error and does not load the skill', (_label, frontmatter, message) => {
    const { snapshot } = loadUser({
      'email/send.md': skillFile(frontmatter),
      'email/read.md': skillFile('name: email.read\ndescription: Read'),
    });
    expect(snapshot.skills.has('email.send')).toBe(false);
    expect(snapshot.skills.has('email.read')).toBe(true);
    const diagnostics = diagnosticsFor(snapshot, 'email/send.md');
    expect(
      diagnostics.some((diagnostic) => diagnostic.severity === 'error' && message.test(diagnostic.message)),
    ).toBe(true);
  });

  it('reports a file without frontmatter, and one whose frontmatter never closes', () => {
    const { snapshot } = loadUser({
      'email/send.md': '# email.send\n\nNo frontmatter.',
      'email/read.md': '---\nname: email.read\ndescription: Read\n',
    });
    expect(snapshot.skills.size).toBe(0);
    expect(diagnosticsFor(snapshot, 'email/send.md')[0]?.message).toMatch(/missing frontmatter/);
    expect(diagnosticsFor(snapshot, 'email/read.md')[0]?.message).toMatch(/never closed/);
  });

  it('rejects reserved actions and invalid file or folder names', () => {
    const { snapshot } = loadUser({
      'email/all.md': skillFile('name: email.all\ndescription: x'),
      'email/help.md': skillFile('name: email.help\ndescription: x'),
      'email/Send-Now.md': skillFile('name: email.send_now\ndescription: x'),
      'My-Mail/send.md': skillFile('name: my_mail.send\ndescription: x'),
    });
    expect(snapshot.skills.size).toBe(0);
    expect(diagnosticsFor(snapshot, 'email/all.md')[0]).toMatchObject({
      severity: 'error',
      message: expect.stringMatching(/"all" is a reserved action/),
    });
    expect(diagnosticsFor(snapshot, 'email/help.md')[0]?.message).toMatch(/"help" is a reserved action/);
    expect(diagnosticsFor(snapshot, 'email/Send-Now.md')[0]?.message).toMatch(
      /file path does not make a valid/,
    );
    expect(diagnosticsFor(snapshot, 'My-Mail/send.md')[0]?.message).toMatch(/domain folder "My-Mail"/);
  });

  it('warns about unknown keys but loads the skill', () => {
    const { snapshot } = loadUser({
      'email/send.md': skillFile('name: email.send\ndescription: x\nicon: mail'),
    });
    expect(snapshot.skills.has('email.send')).toBe(true);
    expect(snapshot.diagnostics).toEqual([
      expect.objectContaining({
        severity: 'warning',
        message: expect.stringMatching(/unknown frontmatter key "icon"/),
      }),
    ]);
  });

  it('ignores non-.md files and dotfiles, and warns about files outside a domain folder or nested deeper', () => {
    const { root, snapshot } = loadUser({
      'email/send.md': send,
      'email/notes.txt': 'not a skill',
      'email/.send.md.swp': 'editor junk',
      'README.md': '# Skills',
      'email/drafts/old.md': skillFile('name: email.old\ndescription: x'),
    });
    expect([...snapshot.skills.keys()]).toEqual(['email.send']);
    expect(snapshot.diagnostics).toEqual([
      {
        path: `${root}/README.md`,
        severity: 'warning',
        message: 'not inside a domain folder, so ignored: move it to <domain>/<action>.md',
      },
      {
        path: `${root}/email/drafts/old.md`,
        severity: 'warning',
        message: 'nested deeper than one domain folder, so ignored: move it to email/<action>.md',
      },
    ]);
  });

  it('increments the version from the previous snapshot', () => {
    const root = tree({ 'email/send.md': send });
    const first = loadSkillRoots([{ dir: root, source: 'user' }]);
    const second = loadSkillRoots([{ dir: root, source: 'user' }], { previous: first });
    expect([first.version, second.version]).toEqual([1, 2]);
  });

  it('re-parses only files whose text changed since the previous snapshot', () => {
    const root = tree({
      'email/send.md': send,
      'email/read.md': skillFile('name: email.read\ndescription: Read'),
    });
    const first = loadSkillRoots([{ dir: root, source: 'user' }]);
    writeSkillFile(root, 'email/read.md', skillFile('name: email.read\ndescription: Read v2'));
    const second = loadSkillRoots([{ dir: root, source: 'user' }], { previous: first });
    expect(second.skills.get('email.send')).toBe(first.skills.get('email.send'));
    expect(second.skills.get('email.read')?.description).toBe('Read v2');
    // Parses are not shared with snapshots of another root that merely has the same paths' texts.
    const fresh = loadSkillRoots([{ dir: root, source: 'user' }]);
    expect(fresh.skills.get('email.send')).not.toBe(first.skills.get('email.send'));
    expect(fresh.skills.get('email.send')).toEqual(first.skills.get('email.send'));
  });

  it('treats a missing root as empty', () => {
    const snapshot = loadSkillRoots([{ dir: '/nonexistent/steward-skills', source: 'user' }]);
    expect([snapshot.skills.size, snapshot.domains.size, snapshot.diagnostics.length]).toEqual([0, 0, 0]);
  });
});

describe('loadSkillRoots: roots and domain indexes', () => {
  it('lets a user skill override a built-in of the same name, and logs both paths at info', () => {
    const builtin = tree({
      'email/send.md': skillFile('name: email.send\ndescription: Built-in send'),
      'email/read.md': skillFile('name: email.read\ndescription: Built-in read'),
    });
    const user = tree({ 'email/send.md': skillFile('name: email.send\ndescription: My send') });
    const { logger, records } = captureLogger();
    // User roots win whatever order they are given in.
    const snapshot = loadSkillRoots(
      [
        { dir: user, source: 'user' },
        { dir: builtin, source: 'builtin' },
      ],
      { logger },
    );
    expect(snapshot.skills.get('email.send')).toMatchObject({ description: 'My send', source: 'user' });
    expect(snapshot.skills.get('email.read')).toMatchObject({ source: 'builtin' });
    const overrides = records.filter((record) => record.skill === 'email.send');
    expect(overrides).toEqual([
      expect.objectContaining({
        level: 30,
        overridden: `${builtin}/email/send.md`,
        by: `${user}/email/send.md`,
      }),
    ]);

    // Reloading an unchanged override does not log it again.
    records.length = 0;
    loadSkillRoots(
      [
        { dir: builtin, source: 'builtin' },
        { dir: user, source: 'user' },
      ],
      { logger, previous: snapshot },
    );
    expect(records.filter((record) => record.skill === 'email.send')).toEqual([]);
  });

  it('generates an index for a domain without SKILL.md, listing its skills sorted by name', () => {
    const { snapshot } = loadUser({
      'notes/write.md': skillFile('name: notes.write\ndescription: Write a note'),
      'notes/archive.md': skillFile('name: notes.archive\ndescription: Archive a note'),
      'notes/search.md': skillFile('name: notes.search\ndescription: Search notes'),
    });
    const index = snapshot.domains.get('notes')!;
    expect(index).toMatchObject({ domain: 'notes', generated: true, path: null, source: 'user' });
    expect(index.description).toBe('3 skills: archive, search, write');
    expect(index.body).toBe(
      [
        '# notes',
        '',
        '## Available Skills',
        '',
        '- notes.archive — Archive a note',
        '- notes.search — Search notes',
        '- notes.write — Write a note',
      ].join('\n'),
    );
  });

  it('reads SKILL.md as the domain index, and reports a bad one while falling back to a generated index', () => {
    const { root, snapshot } = loadUser({
      'email/SKILL.md':
        '---\ndomain: email\ndescription: Email tools\n---\n\n# Email\n\nSend and read mail.\n',
      'email/send.md': send,
      'tasks/SKILL.md': '---\ndomain: todo\n---\n# Tasks\n',
      'tasks/create.md': skillFile('name: tasks.create\ndescription: Create a task'),
      'empty/SKILL.md': '---\ndescription: Nothing here yet\nowner: me\n---\n# Empty\n',
    });
    expect(snapshot.domains.get('email')).toEqual({
      domain: 'email',
      description: 'Email tools',
      body: '# Email\n\nSend and read mail.',
      source: 'user',
      path: `${root}/email/SKILL.md`,
      generated: false,
    });
    expect(snapshot.domains.get('tasks')).toMatchObject({ generated: true });
    expect(diagnosticsFor(snapshot, 'tasks/SKILL.md').map((diagnostic) => diagnostic.message)).toEqual([
      'domain "todo" does not match the folder name "tasks"',
      'missing required field "description"',
    ]);
    expect(snapshot.domains.get('empty')).toMatchObject({
      description: 'Nothing here yet',
      generated: false,
    });
    expect(diagnosticsFor(snapshot, 'empty/SKILL.md')).toEqual([
      expect.objectContaining({
        severity: 'warning',
        message: expect.stringMatching(/unknown frontmatter key "owner"/),
      }),
    ]);
  });

  it('keeps the previous valid version of a skill whose file became invalid, and still reports it', () => {
    const root = tree({
      'email/send.md': send,
      'email/SKILL.md': '---\ndescription: Email tools\n---\n# Email\n',
    });
    const first = loadSkillRoots([{ dir: root, source: 'user' }]);
    writeSkillFile(root, 'email/send.md', skillFile('name: email.send\ndescription: [broken'));
    writeSkillFile(root, 'email/SKILL.md', '---\ndescription: [broken\n---\n');
    const second = loadSkillRoots([{ dir: root, source: 'user' }], { previous: first });
    expect(second.skills.get('email.send')).toBe(first.skills.get('email.send'));
    expect(second.domains.get('email')).toBe(first.domains.get('email'));
    expect(diagnosticsFor(second, 'email/send.md')).toEqual([
      expect.objectContaining({
        severity: 'error',
        message: expect.stringMatching(/unparseable YAML.*\(still using the last valid version\)$/),
      }),
    ]);

    // Without a previous snapshot, the invalid file is simply not loaded.
    expect(loadSkillRoots([{ dir: root, source: 'user' }]).skills.has('email.send')).toBe(false);
  });

  it('does not keep a previous version taken from another path', () => {
    const builtin = tree({ 'email/send.md': skillFile('name: email.send\ndescription: Built-in') });
    const user = tree({});
    const first = loadSkillRoots([{ dir: builtin, source: 'builtin' }]);
    writeSkillFile(user, 'email/send.md', skillFile('name: email.send'));
    const second = loadSkillRoots(
      [
        { dir: builtin, source: 'builtin' },
        { dir: user, source: 'user' },
      ],
      { previous: first },
    );
    expect(second.skills.get('email.send')?.description).toBe('Built-in');
    expect(diagnosticsFor(second, 'email/send.md')[0]?.message).toBe('missing required field "description"');
  });

  it('sorts skills, domains and diagnostics regardless of file creation order', () => {
    const a = loadUser({
      'zeta/b.md': skillFile('name: zeta.b\ndescription: x'),
      'alpha/a.md': skillFile('name: alpha.a\ndescription: x'),
      'alpha/bad.md': 'oops',
      'zeta/bad.md': 'oops',
    }).snapshot;
    const b = loadUser({
      'zeta/bad.md': 'oops',
      'alpha/bad.md': 'oops',
      'alpha/a.md': skillFile('name: alpha.a\ndescription: x'),
      'zeta/b.md': skillFile('name: zeta.b\ndescription: x'),
    }).snapshot;
    expect([...a.skills.keys()]).toEqual(['alpha.a', 'zeta.b']);
    expect([...a.domains.keys()]).toEqual(['alpha', 'zeta']);
    const relative = (snapshot: SkillSnapshot) =>
      snapshot.diagnostics.map((diagnostic) => diagnostic.path.split('/').slice(-2).join('/'));
    expect(relative(a)).toEqual(['alpha/bad.md', 'zeta/bad.md']);
    expect(relative(b)).toEqual(relative(a));
  });
});
