import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

// Each test starts `steward chat` processes: slow on a loaded machine.
const SLOW = 240_000;

import { dispatch, getResults, reply, run, scriptModels } from './support/agent-scripts.ts';
import { MAIN, NODE_FLAGS, ROOT, runCli } from './support/cli.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { writeTestConfig } from './support/steward.ts';

/*
 * The terminal chat as a new user meets it (issue 10, item 8): progress while a turn runs,
 * Ctrl-C, and the local /commands. Each test runs `steward chat` in a child process.
 */

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake?.close();
});
afterEach(() => {
  fake.reset();
});

const AGENT = { agent_id: 'lister', mission: 'List the open tasks', skills: ['tasks.search'] };

describe('steward chat progress', () => {
  it(
    '--once prints the turn progress to stderr and only the reply to stdout; the log goes to the log file, with one line about it',
    async () => {
      // A disabled sentinel is a warning logged as the runtime starts.
      const { env } = writeTestConfig(fake.url, 'sentinel:\n  enabled: false\n');
      const models = scriptModels(fake, {
        orchestrator: [dispatch(AGENT), getResults(), reply('You have no open tasks.')],
        agents: { lister: [run('tasks.search'), reply('No open tasks.')] },
      });
      const result = await runCli(['chat', '--once', 'What is open?'], {
        env: { ...env, LOG_LEVEL: 'info' },
        timeoutMs: SLOW,
      });
      models.assertDone();
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe('You have no open tasks.\n');
      const progress = result.stderr.split('\n');
      expect(progress).toContain('… dispatched agent lister · agents: 1 waiting');
      expect(progress.some((line) => /agent lister running · agents: 1 running/.test(line))).toBe(true);
      expect(progress.some((line) => /1 skill call, last tasks\.search ok/.test(line))).toBe(true);
      expect(progress.some((line) => /agents: 1 done/.test(line))).toBe(true);
      // The log goes to the log file, not over the progress line; the chat shows one line about it.
      expect(result.stderr).not.toContain('sentinel is disabled');
      expect(result.stderr).not.toContain('"level"');
      expect(result.stderr.trim().split('\n').at(-1)).toBe(
        '(1 warning logged meanwhile: npx steward logs shows them)',
      );
      const log = readFileSync(path.join(env.STEWARD_DATA_DIR!, 'logs', 'steward.log'), 'utf8');
      expect(log).toContain('the sentinel is disabled');
    },
    SLOW,
  );

  it(
    'interactive: answers each line in one conversation until /new, streams the reply once, and keeps /help, /status, /new and unknown /commands local',
    async () => {
      const { env } = writeTestConfig(fake.url);
      const seen: string[] = [];
      fake.respondWith((request) => {
        seen.push(JSON.stringify(request.body.messages));
        return { text: `Streamed reply number ${seen.length}.`, chunkDelayMs: 5 };
      });
      const result = await runCli(['chat'], {
        timeoutMs: SLOW,
        env,
        input:
          '/help\n/status\n/frobnicate now\nfirst question\nsecond question\n/new\n/status\n//etc is a folder\n/quit\n',
      });
      expect(result.code).toBe(0);
      expect(seen).toHaveLength(3);
      expect(seen.join('')).not.toMatch(/\/help|\/status|frobnicate/);
      expect(seen[1]).toContain('first question');
      expect(seen[2]).toContain('/etc is a folder');
      expect(seen[2]).not.toContain('first question');
      expect(result.stdout).toContain('/new      start a new conversation');
      expect(result.stdout).toContain('Unknown command /frobnicate. /help lists the commands.');
      expect(result.stdout).toMatch(
        /user local · conversation \(your latest on the terminal\) · .* turns run in this process/,
      );
      expect(result.stdout).toContain('user local · conversation (new)');
      // Streamed as it came, and not printed a second time at the end.
      expect(result.stdout.split('Streamed reply number 1.')).toHaveLength(2);
      expect(result.stdout).toContain('Streamed reply number 2.');
      expect(result.stdout).toContain('Streamed reply number 3.');
    },
    SLOW,
  );
});

describe('Ctrl-C during a turn', () => {
  /** Starts `steward chat --once TEXT` and sends SIGINT `presses` times once stderr shows `when`. */
  const interrupted = (env: Record<string, string>, when: RegExp, presses: number) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [...NODE_FLAGS, MAIN, 'chat', '--once', 'Add a task and more'], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      });
      let stdout = '';
      let stderr = '';
      let sent = 0;
      child.stdout.on('data', (chunk) => {
        stdout += chunk;
      });
      child.stderr.on('data', (chunk) => {
        stderr += chunk;
        // Signals sent back to back may merge into one: the second waits for the first's answer.
        if (
          (sent === 0 && when.test(stderr)) ||
          (sent === 1 && sent < presses && /cancelling/.test(stderr))
        ) {
          sent++;
          child.kill('SIGINT');
        }
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), SLOW);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
    });

  const slowScript = () =>
    scriptModels(fake, {
      orchestrator: [
        dispatch({ agent_id: 'maker', mission: 'Create the task "Pay rent"', skills: ['tasks.create'] }),
        getResults(),
      ],
      // The agent's second call takes long: the user gives up while it runs.
      agents: { maker: [run('tasks.create --title "Pay rent"'), { hang: true }] },
    });

  it(
    'the first Ctrl-C cancels the turn through its signal and says what was already done',
    async () => {
      const { env } = writeTestConfig(fake.url, 'sentinel:\n  enabled: false\n');
      slowScript();
      const result = await interrupted(env, /last tasks\.create ok/, 1);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toContain('cancelling (Ctrl-C again quits)');
      expect(result.stdout).toContain('You cancelled while working on: "Add a task and more".');
      expect(result.stdout).toContain('- tasks.create --title "Pay rent"');
    },
    SLOW,
  );

  it(
    'a second Ctrl-C exits at once',
    async () => {
      const { env } = writeTestConfig(fake.url, 'sentinel:\n  enabled: false\n');
      slowScript();
      const result = await interrupted(env, /last tasks\.create ok/, 2);
      expect(result.code).toBe(130);
      expect(result.stderr).toContain('Stopped.');
    },
    SLOW,
  );
});
