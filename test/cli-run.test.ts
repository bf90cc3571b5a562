import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite, readLockOwner } from '../src/db/index.ts';
import type { Runtime } from '../src/runtime.ts';
import { type CliResult, freePort, runCli, startServer } from './support/cli.ts';
import { cliRuntime, runAsCli, runInProcess } from './support/steward.ts';

/** A fresh home for one Steward: the CLI runs there (no stray steward.yaml) on `<home>/data`. */
function stewardHome(extraEnv: Record<string, string> = {}) {
  const home = mkdtempSync(path.join(os.tmpdir(), 'steward-run-'));
  const dataDir = path.join(home, 'data');
  const env = { STEWARD_DATA_DIR: dataDir, ...extraEnv };
  return {
    home,
    dataDir,
    env,
    run: (...args: string[]) => runCli(['run', ...args], { env, cwd: home }),
    /**
     * `steward run` on this home in this process, as its process executes the command (for
     * what a `run` process of the same case has already proven). Closed before it returns, so a
     * process or `withDatabase` may open the data dir next.
     */
    inProcess: async <T>(use: (runtime: Runtime) => Promise<T>): Promise<T> => {
      const runtime = await cliRuntime(env, home);
      try {
        return await use(runtime);
      } finally {
        await runtime.close();
      }
    },
  };
}

/** The task id in a one-line task rendering such as `[t_4kx9m2qa] Write Q1 report · todo`. */
function taskIdIn(output: string, title: string): string {
  const match = new RegExp(`\\[(t_[a-z0-9]{8})\\] ${title}`).exec(output);
  if (!match) throw new Error(`no task "${title}" in:\n${output}`);
  return match[1]!;
}

type Query = (text: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

/** Reads through the database of a runtime this process has open. */
const queryOf =
  (runtime: Runtime): Query =>
  (text, params) =>
    runtime.database.query(text, params);

/** Reads the embedded database of `dataDir`. Only while no Steward process owns it. */
async function withDatabase<T>(dataDir: string, read: (query: Query) => Promise<T>): Promise<T> {
  const database = await openPglite(dataDir);
  try {
    return await read((text, params) => database.query(text, params));
  } finally {
    await database.close();
  }
}

/** What the server's `POST /api/run` answers for `command`. */
async function apiRun(url: string, command: string): Promise<{ status: string; content: string }> {
  const response = await fetch(`${url}/api/run`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ command }),
  });
  return (await response.json()) as { status: string; content: string };
}

const STACK_LINE = /^\s+at /m;
const output = (result: CliResult) => result.stdout + result.stderr;
const isoDay = (date: Date) => date.toISOString().slice(0, 10);

describe('steward run on the embedded database', () => {
  const steward = stewardHome();
  let taskId = '';

  it('creates, finds and archives a task, and records every change in its history', async () => {
    const before = isoDay(new Date(Date.now() + 86_400_000));
    const created = await steward.run(
      'tasks.create --title "Write Q1 report" --priority high --due tomorrow',
    );
    const after = isoDay(new Date(Date.now() + 86_400_000));
    expect(created.code, output(created)).toBe(0);
    taskId = taskIdIn(created.stdout, 'Write Q1 report');
    // The default user's time zone is UTC, so "tomorrow" is tomorrow's UTC date.
    expect(created.stdout).toMatch(/Write Q1 report · todo · high · due (\d{4}-\d{2}-\d{2})/);
    expect([before, after]).toContain(/due (\d{4}-\d{2}-\d{2})/.exec(created.stdout)?.[1]);

    // Finding and archiving in this process, as `steward run` executes them (the process above
    // proves that path, its exit code and the default user).
    await steward.inProcess(async (runtime) => {
      const found = await runInProcess(runtime, 'tasks.search --query report');
      expect(found.code, output(found)).toBe(0);
      expect(found.stdout).toContain(`[${taskId}] Write Q1 report`);

      const archived = await runInProcess(runtime, `tasks.delete --id ${taskId}`);
      expect(archived.code, output(archived)).toBe(0);
      expect(archived.stdout).toContain(`Archived [${taskId}]`);

      const gone = await runInProcess(runtime, 'tasks.search --query report');
      expect(gone.code, output(gone)).toBe(0);
      expect(gone.stdout).not.toContain(taskId);

      // What the data dir's database holds, read through this process's connection to it.
      const query = queryOf(runtime);
      const tasks = await query('SELECT title, user_id, archived_at FROM tasks WHERE id = $1', [taskId]);
      expect(tasks).toHaveLength(1);
      expect(tasks[0]).toMatchObject({ title: 'Write Q1 report', user_id: 'local' });
      expect(tasks[0]?.archived_at).not.toBeNull();
      const history = await query(
        'SELECT field, old_value, new_value, user_id FROM task_history WHERE task_id = $1 ORDER BY id',
        [taskId],
      );
      expect(history.map((row) => row.field)).toEqual(['created', 'archived_at']);
      expect(history[0]?.new_value).toMatchObject({ title: 'Write Q1 report' });
      expect(history[1]).toMatchObject({ old_value: null, user_id: 'local' });
      expect(history[1]?.new_value).toEqual(expect.any(String));
    });
  }, 180_000);

  it('prints {status, content, metadata} with --json, for results and errors alike', async () => {
    const shown = await steward.run('--json', `tasks.get --id ${taskId}`);
    expect(shown.code, output(shown)).toBe(0);
    const result = JSON.parse(shown.stdout) as { status: string; content: string; metadata: object };
    expect(Object.keys(result).sort()).toEqual(['content', 'metadata', 'status']);
    expect(result.status).toBe('ok');
    expect(result.content).toContain(taskId);
    expect(result.content).toMatch(/archived/i);
    expect(typeof result.metadata).toBe('object');

    const missing = await steward.run('--json', 'tasks.get --id t_zzzzzzzz');
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout)).toMatchObject({ status: 'error', content: expect.any(String) });
  }, 90_000);

  it('refuses garbled commands with the problem and the fix, writes nothing, and shows no stack trace', async () => {
    const count = async (query: Query) => {
      const [tasks] = await query('SELECT count(*)::int AS n FROM tasks');
      const [history] = await query('SELECT count(*)::int AS n FROM task_history');
      return { tasks: tasks?.n, history: history?.n };
    };
    const counted = await withDatabase(steward.dataDir, count);

    const cases: Array<{ command: string; problem: RegExp; fix: RegExp }> = [
      {
        command: 'tasks.create --title "Write Q2 report --priority high',
        problem: /Unterminated double quote/,
        fix: /Close the quote/,
      },
      {
        command: 'tasks.creat --title "Write Q2 report"',
        problem: /Unknown skill "tasks\.creat"/,
        fix: /Did you mean: tasks\.create/,
      },
      {
        command: 'tasks.create --title "Write Q2 report" --colour red',
        problem: /Unknown flag --colour/,
        fix: /Accepted flags: .*--priority.*--title/,
      },
      {
        command: 'tasks.create --title "Write Q2 report" --priority urgent',
        problem: /Invalid --priority/,
        fix: /critical, high, medium, low/,
      },
      {
        command: 'tasks.create --title "Write Q2 report" --due 2026-02-30',
        problem: /2026-02-30 is not a real calendar date/,
        fix: /YYYY-MM-DD/,
      },
    ];
    // The first through a `steward run` process: an error result exits 1 with the message alone.
    const [first, ...rest] = cases;
    const result = await steward.run(first!.command);
    expect(result.code, `${first!.command}\n${output(result)}`).toBe(1);
    expect(output(result)).toMatch(first!.problem);
    expect(output(result)).toMatch(first!.fix);
    expect(output(result)).not.toMatch(STACK_LINE);
    // The others in this process on the same data dir, as `steward run` executes them: it prints
    // the result's content (and nothing else) and exits 1 for status error.
    await steward.inProcess(async (runtime) => {
      for (const { command, problem, fix } of rest) {
        const outcome = await runAsCli(runtime, 'local', command);
        expect(outcome.status, `${command}\n${outcome.content}`).toBe('error');
        expect(outcome.content).toMatch(problem);
        expect(outcome.content).toMatch(fix);
        expect(outcome.content).not.toMatch(STACK_LINE);
      }
      // Nothing was written, by the process or here (read through this process's connection).
      expect(await count(queryOf(runtime))).toEqual(counted);
    });
  }, 180_000);

  it('exits 2 on usage errors: no command, an empty command, a bad --user', async () => {
    const cli = (args: string[]) => runCli(args, { env: steward.env, cwd: steward.home });
    // None of these reaches the database, so they may run side by side.
    const [none, empty, badUser] = await Promise.all([
      cli(['run']),
      cli(['run', '  ']),
      cli(['run', '--user', 'Bad User!', 'get_skill']),
    ]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("missing required argument 'command'");
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('give a command');
    expect(badUser.code).toBe(2);
    expect(badUser.stderr).toContain('"Bad User!" is not a valid user id');
    for (const result of [none, empty, badUser]) expect(output(result)).not.toMatch(STACK_LINE);
  }, 90_000);

  it('acts as user local by default, and another user sees none of its tasks', async () => {
    // A process with no --user creates the task; its owner is checked in the database. The searches
    // run in this process as `steward run` executes them, as the user --user names.
    const mine = await steward.run('tasks.create --title "Local budget review"');
    expect(mine.code, output(mine)).toBe(0);
    const localId = taskIdIn(mine.stdout, 'Local budget review');
    await steward.inProcess(async (runtime) => {
      expect(await runtime.database.query('SELECT user_id FROM tasks WHERE id = $1', [localId])).toEqual([
        { user_id: 'local' },
      ]);
      const asLocal = await runInProcess(runtime, 'tasks.search --query budget', 'local');
      expect(asLocal.stdout).toContain(`[${localId}] Local budget review`);

      const aliceSearch = await runInProcess(runtime, 'tasks.search --query budget', 'alice');
      expect(aliceSearch.code, output(aliceSearch)).toBe(0);
      expect(aliceSearch.stdout).not.toContain(localId);
    });

    const aliceGet = await steward.run('--user', 'alice', `tasks.get --id ${localId}`);
    expect(aliceGet.code).toBe(1);
    expect(aliceGet.stdout).toContain(`No task ${localId}`);
  }, 180_000);
});

describe('steward run while a server owns the data dir', () => {
  // One server for both cases: its skills are read from a folder of its own.
  const skillsDir = mkdtempSync(path.join(os.tmpdir(), 'steward-skills-'));
  const steward = stewardHome({ STEWARD_SKILLS_DIR: skillsDir });
  let server: Awaited<ReturnType<typeof startServer>>;
  const api = (command: string) => apiRun(server.url, command);
  beforeAll(async () => {
    server = await startServer({
      env: { ...steward.env, PORT: String(await freePort()) },
      cwd: steward.home,
    });
  }, 180_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('hot-reloads a new user skill, and keeps serving it when an edit breaks it', async () => {
    const page = (frontmatter: string, body: string) =>
      `---\n${frontmatter}---\n\n# notes.hello\n\n${body}\n`;
    expect((await api('get_skill: notes.hello')).status).toBe('error');

    mkdirSync(path.join(skillsDir, 'notes'));
    writeFileSync(
      path.join(skillsDir, 'notes', 'hello.md'),
      page('name: notes.hello\ndescription: Greets the user\n', 'Say hello, version one.'),
    );
    await expect
      .poll(async () => (await api('get_skill: notes.hello')).content, { timeout: 3_000, interval: 100 })
      .toContain('Say hello, version one.');

    // Break the page (no name), then add a marker page: once the marker is served, the
    // reload has read the broken file too.
    writeFileSync(
      path.join(skillsDir, 'notes', 'hello.md'),
      page('description: Greets the user\n', 'Say hello, version two.'),
    );
    writeFileSync(
      path.join(skillsDir, 'notes', 'marker.md'),
      '---\nname: notes.marker\ndescription: Marks a reload\n---\n\n# notes.marker\n\nMarker.\n',
    );
    await expect
      .poll(async () => (await api('get_skill: notes.marker')).status, { timeout: 3_000, interval: 100 })
      .toBe('ok');
    const kept = await api('get_skill: notes.hello');
    expect(kept.status).toBe('ok');
    expect(kept.content).toContain('Say hello, version one.');
    expect(kept.content).not.toContain('version two');
    // The operator is told, in the server's log, which file is broken and that it was kept.
    await expect
      .poll(
        () =>
          server
            .output()
            .split('\n')
            .find((line) => line.includes('hello.md')),
        {
          timeout: 3_000,
        },
      )
      .toContain('still using the last valid version');

    const validated = await runCli(['skills', 'validate', skillsDir], {
      env: steward.env,
      cwd: steward.home,
    });
    expect(validated.code).toBe(1);
    expect(validated.stdout).toContain(
      `${path.join(skillsDir, 'notes', 'hello.md')}: missing required field "name"`,
    );
  }, 180_000);

  it('goes through the server API, which stores the task in its database', async () => {
    let taskId = '';
    try {
      // A local run would fail here: the server holds the data dir's lock.
      expect(readLockOwner(steward.dataDir)).toMatchObject({ pid: server.child.pid, port: server.port });
      const created = await steward.run('tasks.create --title "Filed through the server" --priority low');
      expect(created.code, output(created)).toBe(0);
      taskId = taskIdIn(created.stdout, 'Filed through the server');

      // The server's API serves the task the process relayed (a search relays the same way).
      expect(await api('tasks.search --query filed')).toMatchObject({
        status: 'ok',
        content: expect.stringContaining(`[${taskId}] Filed through the server`),
      });
      expect(await api(`tasks.get --id ${taskId}`)).toMatchObject({
        status: 'ok',
        content: expect.stringContaining(taskId),
      });
    } finally {
      expect(await server.stop()).toBe(0);
    }
    await withDatabase(steward.dataDir, async (query) => {
      expect(await query('SELECT title, priority FROM tasks WHERE id = $1', [taskId])).toEqual([
        { title: 'Filed through the server', priority: 'low' },
      ]);
    });
  }, 180_000);
});
