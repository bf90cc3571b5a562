import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { stewardCommand } from '../src/config/index.ts';
import { freePort, ROOT, runCli } from './support/cli.ts';
import { cliRuntime, runInProcess } from './support/steward.ts';

/*
 * The rough edges a new user hit in the first ten minutes (issue 10, item 8), each reproduced
 * through the CLI in a child process: one-line errors with the fix, .env, --version, the
 * quoting hint, broken and template skills, and `npm start` stopping with its npm process.
 * (A template skill's flag errors and its page run in this process, through `steward run`'s code.)
 */

const tempDir = () => mkdtempSync(path.join(os.tmpdir(), 'steward-first-run-'));
const oneLine = (text: string) => text.trim().split('\n');

describe('one line with the fix', () => {
  it('for a port in use', async () => {
    const port = await freePort();
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
    try {
      const result = await runCli(['start'], { env: { STEWARD_DATA_DIR: tempDir(), PORT: String(port) } });
      expect(result.code).toBe(1);
      expect(oneLine(result.stderr)).toEqual([
        `steward: Cannot listen: port ${port} on 127.0.0.1 is already in use: set PORT to a free port (e.g. PORT=8788), or stop what holds it.`,
      ]);
    } finally {
      holder.close();
    }
  }, 180_000);

  it('for a data dir that cannot be created', async () => {
    const file = path.join(tempDir(), 'a-file');
    writeFileSync(file, '');
    const result = await runCli(['run', 'get_skill'], { env: { STEWARD_DATA_DIR: path.join(file, 'data') } });
    expect(result.code).toBe(1);
    expect(oneLine(result.stderr)).toEqual([
      `steward: The data dir ${path.join(file, 'data')} cannot be created: a folder above it is missing or is a file (ENOTDIR): set STEWARD_DATA_DIR to a writable folder (or DATABASE_URL to use a PostgreSQL server).`,
    ]);
  });

  it('for LLM_BASE_URL without a scheme', async () => {
    const result = await runCli(['doctor'], {
      env: { STEWARD_DATA_DIR: tempDir(), LLM_BASE_URL: 'localhost:11434', STEWARD_CONFIG: '/dev/null' },
    });
    expect(result.code).toBe(2);
    expect(oneLine(result.stderr)).toEqual([
      'steward: invalid configuration: LLM_BASE_URL: must be an http(s) URL with its scheme, e.g. http://localhost:11434/v1',
    ]);
  });
});

describe('small things', () => {
  it('--version prints the version', async () => {
    const result = await runCli(['--version']);
    expect(result).toMatchObject({ code: 0, stdout: '0.1.0\n' });
  });

  it('reads .env in the working directory, without overriding the real environment', async () => {
    const cwd = tempDir();
    writeFileSync(
      path.join(cwd, '.env'),
      '# settings\nLLM_BASE_URL=localhost:1\nSTEWARD_DATA_DIR=from-dotenv\nLOG_LEVEL="error"\n',
    );
    // From .env: the bad LLM_BASE_URL is read (and refused).
    const bad = await runCli(['doctor'], { cwd, env: { STEWARD_CONFIG: '/dev/null' } });
    expect(bad.stderr).toContain('LLM_BASE_URL: must be an http(s) URL');
    // The real environment wins over .env.
    const real = await runCli(['skills', 'new', 'notes.idea'], {
      cwd,
      env: { STEWARD_CONFIG: '/dev/null', LLM_BASE_URL: 'http://127.0.0.1:1/v1' },
    });
    expect(real.code).toBe(0);
    expect(real.stdout).toContain(path.join(cwd, 'from-dotenv', 'skills', 'notes', 'idea.md'));
  });

  it('steward run with the command unquoted says to quote it', async () => {
    const result = await runCli(['run', 'tasks.search', '--query', 'q1 report']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`error: unknown option '--query'`);
    expect(result.stderr.trim().split('\n').at(-1)).toBe(
      `hint: quote the whole command, e.g. ${stewardCommand()} run 'tasks.search --query "q1 report"'`,
    );
  });
});

describe('user skills as they break', () => {
  it('lists a broken skill as invalid with the reason and the line, and run says so; template flags follow ## Flags', async () => {
    const skillsDir = tempDir();
    mkdirSync(path.join(skillsDir, 'notes'));
    writeFileSync(
      path.join(skillsDir, 'notes', 'broken.md'),
      '---\nname: notes.broken\ndescription: A broken one\ntags: [a, b\nauthor: me\n---\n\n## Usage\n\nnotes.broken\n',
    );
    writeFileSync(
      path.join(skillsDir, 'notes', 'weekly.md'),
      '---\nname: notes.weekly\ndescription: Weekly review\nreadonly: true\n---\n\n## Usage\n\nnotes.weekly --week N\n\n## Flags\n\n--week   Which week (required)\n--notes  Extra notes\n\n## Behavior\n\nReview the week.\n',
    );
    const env = { STEWARD_DATA_DIR: tempDir(), STEWARD_SKILLS_DIR: skillsDir, STEWARD_CONFIG: '/dev/null' };
    const reason =
      'unparseable YAML frontmatter (line 4: "tags: [a, b"): Flow sequence in block collection must be sufficiently indented and end with a ]';

    const list = await runCli(['skills', 'list'], { env });
    expect(list.stdout).toMatch(
      new RegExp(
        `notes\\.broken +invalid +user +- +- +- +invalid: ${reason.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`,
      ),
    );
    expect(list.stdout).toMatch(/notes\.weekly +read-only +user +0 +0 +never +Weekly review/);
    const listed = JSON.parse((await runCli(['skills', 'list', '--json'], { env })).stdout) as Array<{
      name: string;
      invalid?: string;
    }>;
    expect(listed.find((row) => row.name === 'notes.broken')).toMatchObject({ invalid: reason });

    const broken = await runCli(['run', 'notes.broken'], { env });
    expect(broken.code).toBe(1);
    expect(broken.stdout).toContain(`notes.broken: invalid: ${reason}.`);

    // The process above proves the CLI path; the template skill's runs take it in this process.
    const runtime = await cliRuntime(env, ROOT);
    try {
      const unknownFlag = await runInProcess(runtime, 'notes.weekly --week 3 --bogus 1');
      expect(unknownFlag.code).toBe(1);
      expect(unknownFlag.stdout.trim()).toBe(
        'notes.weekly has no flag --bogus. Its flags: --week, --notes. See `notes.weekly --help`.',
      );
      const missing = await runInProcess(runtime, 'notes.weekly --notes x');
      expect(missing.stdout.trim()).toBe('notes.weekly needs --week (required). See `notes.weekly --help`.');
      const good = await runInProcess(runtime, 'notes.weekly --week 3');
      expect(good.code).toBe(0);
      expect(good.stdout).toContain('Review the week.');
    } finally {
      await runtime.close();
    }
  }, 240_000);
});

describe('npm start', () => {
  it('the server is the process npm runs, so stopping npm stops it', async () => {
    const port = await freePort();
    const npm = spawn('npm', ['start', '--silent'], {
      cwd: ROOT,
      env: { ...process.env, STEWARD_DATA_DIR: tempDir(), PORT: String(port), LOG_LEVEL: 'warn' },
    });
    let output = '';
    npm.stdout.on('data', (chunk) => {
      output += chunk;
    });
    npm.stderr.on('data', (chunk) => {
      output += chunk;
    });
    const deadline = Date.now() + 120_000;
    for (;;) {
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null);
      if (ready?.status === 200) break;
      if (Date.now() > deadline || npm.exitCode !== null) throw new Error(`not ready: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const exited = new Promise((resolve) => npm.once('exit', resolve));
    npm.kill('SIGTERM');
    await exited;
    // The server stopped with npm: nothing answers on its port any more.
    let answering = true;
    for (let i = 0; i < 100 && answering; i++) {
      answering = (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null)) !== null;
      if (answering) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(answering, output).toBe(false);
  }, 180_000);
});
