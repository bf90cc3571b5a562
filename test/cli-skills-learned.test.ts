import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { skillsHistory } from '../src/cli/skills.ts';
import { loadConfig } from '../src/config/index.ts';
import type { Runtime } from '../src/runtime.ts';
import { formatCommand } from '../src/skills/index.ts';
import { freePort, refusal, runCli, startServer } from './support/cli.ts';
import { cliRuntime, runInProcess } from './support/steward.ts';

/*
 * Learned skills from the terminal on one embedded data dir: written, changed and run as
 * `steward run` executes the user's own commands (in this process, through its code:
 * test/cli-run.test.ts covers that command's process), then history, rollback and use counts
 * through `steward skills`, each command its own process.
 */

const SKILL = 'travel.plan';
const body = (step: string) =>
  `## Usage\n\n${SKILL} [--city <name>]\n\n## Flags\n\n--city  Destination\n\n## Behavior\n\n1. ${step}`;

describe('steward skills history / rollback / list', { timeout: 240_000 }, () => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'steward-learned-cli-'));
  const dataDir = path.join(home, 'data');
  /** `steward run COMMAND --user USER` in this process, on a runtime closed before a process opens the data dir. */
  let runtime: Runtime | undefined;
  const runHere = async (command: string, user: string) => {
    runtime ??= await cliRuntime({ STEWARD_DATA_DIR: dataDir }, home);
    return runInProcess(runtime, command, user);
  };
  const closeRuntime = async () => {
    await runtime?.close();
    runtime = undefined;
  };
  afterAll(closeRuntime);
  const steward = async (...args: string[]) => {
    await closeRuntime();
    return runCli(args, { env: { STEWARD_DATA_DIR: dataDir }, cwd: home, timeoutMs: 90_000 });
  };
  const file = path.join(dataDir, 'skills', 'travel', 'plan.md');

  it('keeps every version, shows them, rolls back, and counts runs', async () => {
    const written = await runHere(
      formatCommand('skills.write', {
        name: SKILL,
        description: 'Plan a trip',
        body: body('List travel tasks with tasks.search --query trip.'),
      }),
      'alice',
    );
    expect(written.code, written.stdout + written.stderr).toBe(0);
    expect(written.stdout).toContain(`Saved ${SKILL} (version 1)`);
    const first = readFileSync(file, 'utf8');

    const updated = await runHere(
      formatCommand('skills.update', {
        name: SKILL,
        body: body('List travel tasks with tasks.search --query trip --status todo.'),
        reason: 'only open tasks',
      }),
      'alice',
    );
    expect(updated.code, updated.stdout + updated.stderr).toBe(0);

    const text = await steward('skills', 'history', SKILL, '--diff');
    expect(text.stdout).toContain(`${SKILL} (user alice): 2 version(s)`);
    expect(text.stdout).toContain('+1. List travel tasks with tasks.search --query trip --status todo.');

    const rolled = await steward('skills', 'rollback', SKILL, '--to', '1');
    expect(rolled.code, rolled.stderr).toBe(0);
    expect(rolled.stdout).toContain(`${SKILL} (user alice) is now version 3: rolled back to version 1.`);
    expect(readFileSync(file, 'utf8')).toBe(first);
    // Every version in --json, the rollback's among them (the text above showed versions 1 and 2).
    const history = await steward('skills', 'history', SKILL, '--user', 'alice', '--json');
    expect(history.code, history.stderr).toBe(0);
    const versions = JSON.parse(history.stdout) as Array<Record<string, unknown>>;
    expect(versions).toEqual([
      { version: 1, at: expect.any(String), author: 'alice', reason: 'written with skills.write' },
      { version: 2, at: expect.any(String), author: 'alice', reason: 'only open tasks' },
      { version: 3, at: expect.any(String), author: 'local', reason: 'rolled back to version 1' },
    ]);
    expect(Number.isNaN(Date.parse(String(versions[0]!.at)))).toBe(false);

    const bad = await steward('skills', 'rollback', SKILL, '--to', '9');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('has versions 1 to 3');
    // The `rollback` process above proves how a refusal prints; this one in this process.
    await closeRuntime();
    const none = await refusal(
      skillsHistory(loadConfig({ env: { STEWARD_DATA_DIR: dataDir }, cwd: home }), 'tasks.create', {}),
    );
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('tasks.create has no history');

    const ran = await runHere(`${SKILL} --city Porto`, 'alice');
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain('List travel tasks with tasks.search --query trip.');
    const other = await runHere(SKILL, 'bob');
    expect(other.code).toBe(1);
    expect(other.stdout).toContain(`Unknown skill "${SKILL}"`);

    const listed = await steward('skills', 'list', '--json');
    expect(listed.code, listed.stderr).toBe(0);
    const rows = JSON.parse(listed.stdout) as Array<Record<string, unknown>>;
    // Bob's call of the name was an unknown skill, not a run of alice's skill.
    expect(rows.find((row) => row.name === SKILL)).toMatchObject({
      owner: 'alice',
      runs: 1,
      failures: 0,
      last_used: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    });
    expect(rows.find((row) => row.name === 'skills.write')).toMatchObject({
      owner: null,
      runs: 1,
      failures: 0,
    });
    expect(rows.find((row) => row.name === 'tasks.create')).toMatchObject({
      owner: null,
      runs: 0,
      failures: 0,
      last_used: null,
    });
    const table = await steward('skills', 'list');
    expect(table.stdout.split('\n')[0]).toMatch(
      /^NAME\s+ACCESS\s+SOURCE\s+RUNS\s+FAILED\s+LAST USED\s+DESCRIPTION$/,
    );
    expect(table.stdout).toMatch(
      new RegExp(`${SKILL.replace('.', '\\.')}\\s+read-only\\s+user\\s+1\\s+0\\s+\\d{4}-`),
    );
  });

  it('does the same through a running server that owns the data dir', async () => {
    await closeRuntime();
    const server = await startServer({
      env: { STEWARD_DATA_DIR: dataDir, PORT: String(await freePort()) },
      cwd: home,
    });
    try {
      const history = await steward('skills', 'history', SKILL, '--json');
      expect(history.code, history.stderr).toBe(0);
      expect((JSON.parse(history.stdout) as unknown[]).length).toBe(3);
      const rolled = await steward(
        'skills',
        'rollback',
        SKILL,
        '--to',
        '2',
        '--reason',
        'open tasks after all',
      );
      expect(rolled.code, rolled.stderr).toBe(0);
      expect(rolled.stdout).toContain(
        `${SKILL} (user alice) is now version 4: rolled back to version 2: open tasks after all.`,
      );
      // The server reloaded the page at once: the owner runs version 2's instructions.
      const ran = await steward('run', SKILL, '--user', 'alice');
      expect(ran.stdout).toContain('--query trip --status todo.');
      const refused = await steward('skills', 'rollback', SKILL, '--to', '4');
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('nothing changed');
      const rows = JSON.parse((await steward('skills', 'list', '--json')).stdout) as Array<
        Record<string, unknown>
      >;
      expect(rows.find((row) => row.name === SKILL)).toMatchObject({ owner: 'alice', runs: 2, failures: 0 });
    } finally {
      await server.stop();
    }
  });
});
