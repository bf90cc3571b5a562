import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runCli } from './support/cli.ts';

const BUILTIN_SKILLS = path.join(ROOT, 'skills');
const TASK_SKILLS = {
  'tasks.create': 'mutating',
  'tasks.delete': 'mutating',
  'tasks.get': 'read-only',
  'tasks.search': 'read-only',
  'tasks.update': 'mutating',
};

/** A fresh home with an empty data dir, so only the built-in skills are loaded. */
function stewardHome() {
  const home = mkdtempSync(path.join(os.tmpdir(), 'steward-skills-cli-'));
  const dataDir = path.join(home, 'data');
  const env = { STEWARD_DATA_DIR: dataDir };
  return {
    dataDir,
    userSkills: path.join(dataDir, 'skills'),
    steward: (...args: string[]) => runCli(args, { env, cwd: home }),
  };
}

// Each test has its own home and none opens the database, so they run side by side.
describe.concurrent('steward skills', { timeout: 90_000 }, () => {
  it('lists the five task skills with their access and source', async () => {
    const { steward } = stewardHome();
    const listed = await steward('skills', 'list');
    expect(listed.code, listed.stderr).toBe(0);
    const [header, ...rows] = listed.stdout.trim().split('\n');
    expect(header).toMatch(/^NAME\s+ACCESS\s+SOURCE\s+RUNS\s+FAILED\s+LAST USED\s+DESCRIPTION$/);
    // Other domains may ship built-in skills too; this checks the tasks domain.
    const columns = rows.map((row) => row.split(/\s{2,}/)).filter(([name]) => name?.startsWith('tasks.'));
    expect(columns.map(([name, access, source]) => [name, access, source])).toEqual(
      Object.entries(TASK_SKILLS).map(([name, access]) => [name, access, 'builtin']),
    );
    const create = columns.find(([name]) => name === 'tasks.create');
    // No database yet: nothing has run.
    expect(create?.slice(3, 6)).toEqual(['0', '0', 'never']);
    expect(create?.[6]).toMatch(/^Create a task/);
  });

  it('lists them as JSON', async () => {
    const { steward } = stewardHome();
    const listed = await steward('skills', 'list', '--json');
    expect(listed.code, listed.stderr).toBe(0);
    const skills = JSON.parse(listed.stdout) as Array<{
      name: string;
      description: string;
      readonly: boolean;
      source: string;
    }>;
    const tasks = skills.filter((skill) => skill.name.startsWith('tasks.'));
    expect(tasks.map(({ name, readonly, source }) => ({ name, readonly, source }))).toEqual(
      Object.entries(TASK_SKILLS).map(([name, access]) => ({
        name,
        readonly: access === 'read-only',
        source: 'builtin',
      })),
    );
    for (const skill of tasks) expect(skill.description.length).toBeGreaterThan(10);
  });

  it('shows the page get_skill serves for a domain and for a skill, and suggests names for a typo', async () => {
    const { steward } = stewardHome();
    const [domain, skill, typo] = await Promise.all([
      steward('skills', 'show', 'tasks'),
      steward('skills', 'show', 'tasks.create'),
      steward('skills', 'show', 'tasks.craete'),
    ]);
    expect(domain.code, domain.stderr).toBe(0);
    expect(domain.stdout).toContain('# Tasks');
    for (const name of Object.keys(TASK_SKILLS)) expect(domain.stdout).toContain(name);

    expect(skill.code, skill.stderr).toBe(0);
    expect(skill.stdout).toContain('# tasks.create');
    expect(skill.stdout).toMatch(/--title\s+Short title of the task \(required\)/);
    expect(skill.stdout).toContain('--priority');

    expect(typo.code).toBe(1);
    expect(typo.stdout).toContain('Unknown skill "tasks.craete"');
    expect(typo.stdout).toContain('tasks.create');
  });

  it('validates the built-in skills without a diagnostic', async () => {
    const { steward } = stewardHome();
    const validated = await steward('skills', 'validate', BUILTIN_SKILLS);
    expect(validated.code, validated.stdout).toBe(0);
    expect(validated.stdout).not.toMatch(/^error:/m);
    expect(validated.stdout).toContain('0 error(s)');
  });

  it('fails validation of a dir with a broken file, naming the file and the problem', async () => {
    const { steward } = stewardHome();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'steward-broken-skills-'));
    mkdirSync(path.join(dir, 'notes'));
    writeFileSync(
      path.join(dir, 'notes', 'good.md'),
      '---\nname: notes.good\ndescription: A valid page\n---\n\n# notes.good\n\nFine.\n',
    );
    writeFileSync(path.join(dir, 'notes', 'broken.md'), '---\ndescription: No name here\n---\n\n# broken\n');
    const validated = await steward('skills', 'validate', dir);
    expect(validated.code).toBe(1);
    const lines = validated.stdout.trim().split('\n');
    expect(lines).toEqual([
      `error: ${path.join(dir, 'notes', 'broken.md')}: missing required field "name"`,
      `1 error(s), 0 warning(s) in ${dir}`,
    ]);
  });

  it('creates a valid page with skills new that get_skill then serves', async () => {
    const { steward, userSkills } = stewardHome();
    const created = await steward('skills', 'new', 'notes.todo');
    const file = path.join(userSkills, 'notes', 'todo.md');
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain(`created ${file}`);
    expect(existsSync(file)).toBe(true);

    const [validated, served, again] = await Promise.all([
      steward('skills', 'validate', userSkills),
      steward('run', 'get_skill: notes.todo'),
      steward('skills', 'new', 'notes.todo'),
    ]);
    expect(validated.code, validated.stdout).toBe(0);
    expect(validated.stdout).toContain('0 error(s), 0 warning(s)');
    expect(served.code, served.stdout + served.stderr).toBe(0);
    expect(served.stdout).toContain('# notes.todo');
    expect(served.stdout).toContain('## Flags');
    // A second `new` must not overwrite the page the user has been editing.
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already exists');
  });

  it('refuses a bad skill name with exit 2 and writes nothing', async () => {
    const { steward, userSkills } = stewardHome();
    const refused = await steward('skills', 'new', 'Bad.Name');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('"Bad.Name" is not a skill name');
    expect(existsSync(userSkills) ? readdirSync(userSkills) : []).toEqual([]);
  });
});
