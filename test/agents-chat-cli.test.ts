import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.ts';
import { type Database, openDatabase } from '../src/db/index.ts';
import { approve, dispatch, getResults, refuse, reply, run, scriptModels } from './support/agent-scripts.ts';
import { runCli } from './support/cli.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { writeTestConfig } from './support/steward.ts';

/*
 * Agent scenarios through `steward chat --once` in a child process, as a user at a terminal
 * runs them: the process's own runtime on the embedded database in its data dir, talking to the
 * fake LLM. (Each run pays a full process start, so this covers a subset; agents-e2e.test.ts
 * runs every scenario on every backend.)
 */

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake?.close();
});

describe('steward chat --once', () => {
  let env: Record<string, string>;
  let dir: string;
  beforeAll(() => {
    ({ dir, env } = writeTestConfig(fake.url));
  });
  afterEach(() => {
    fake.reset();
  });

  const chat = (...args: string[]) => runCli(['chat', ...args], { env });
  /** Opens the database the CLI used, between runs (the data dir has one owner at a time). */
  const inDatabase = async <T>(read: (database: Database) => Promise<T>): Promise<T> => {
    const { database, lock } = await openDatabase(loadConfig({ env, cwd: dir }));
    try {
      return await read(database);
    } finally {
      await database.close();
      lock?.release();
    }
  };

  it('--json prints {reply, conversationId, turnId, usage, receipts} after an agent created the task', async () => {
    const models = scriptModels(fake, {
      orchestrator: [
        dispatch({
          agent_id: 'creator',
          mission: 'Create the task "Water plants"',
          skills: ['tasks.create'],
        }),
        getResults(),
        reply('Added "Water plants".'),
      ],
      agents: { creator: [run('tasks.create --title "Water plants"'), reply('Created "Water plants".')] },
      sentinel: [approve()],
    });

    const result = await chat('--once', 'Add a task to water the plants', '--user', 'cli-json', '--json');

    models.assertDone();
    expect(result.code).toBe(0);
    const printed = JSON.parse(result.stdout) as {
      reply: string;
      conversationId: string;
      turnId: string;
      usage: { promptTokens: number; completionTokens: number };
      receipts: unknown[];
    };
    expect(Object.keys(printed).sort()).toEqual(['conversationId', 'receipts', 'reply', 'turnId', 'usage']);
    // --json: the receipts as data, not as lines in the reply.
    expect(printed.reply).toBe('Added "Water plants".');
    expect(printed.receipts).toEqual([
      {
        skill: 'tasks.create',
        status: 'done',
        summary: expect.stringMatching(/^Water plants \(t_[a-z0-9]+\)$/),
        execution_id: expect.any(String),
      },
    ]);
    expect(printed.usage.promptTokens).toBeGreaterThan(0);
    expect(printed.usage.completionTokens).toBeGreaterThan(0);
    expect(models.sentinelRequests()).toHaveLength(1);
    const { turns, tasks } = await inDatabase(async (database) => ({
      turns: await database.query('SELECT conversation_id, status FROM turns WHERE id = $1', [
        printed.turnId,
      ]),
      tasks: await database.query('SELECT title FROM tasks WHERE user_id = $1', ['cli-json']),
    }));
    expect(turns).toEqual([{ conversation_id: printed.conversationId, status: 'completed' }]);
    expect(tasks).toEqual([{ title: 'Water plants' }]);
  });

  it('asks for an OK when the sentinel refuses; "yes" in the next run does exactly that once', async () => {
    const command = 'tasks.create --title "Cancel gym membership" --priority critical';
    const models = scriptModels(fake, {
      orchestrator: [
        dispatch({
          agent_id: 'gym',
          mission: 'Create a task to cancel the gym membership',
          skills: ['tasks.create'],
        }),
        getResults(),
      ],
      agents: { gym: [run(command)] },
      sentinel: [refuse('Critical priority was not asked for.')],
    });

    const paused = await chat('--once', 'Remind me to cancel the gym membership', '--user', 'cli-careful');

    expect(paused.code).toBe(0);
    expect(paused.stdout).toContain(
      `Before I run \`${command}\` I need your OK: the safety check said Critical priority was not asked for.`,
    );
    expect(paused.stdout).toContain(
      '✗ tasks.create — Cancel gym membership (not run: the safety check stopped it)',
    );
    const tasksOf = (database: Database) =>
      database.query('SELECT title, priority FROM tasks WHERE user_id = $1', ['cli-careful']);
    expect(await inDatabase(tasksOf)).toEqual([]);

    models.extend({ orchestrator: [reply('Done: "Cancel gym membership" is on your list.')] });
    const confirmed = await chat('--once', 'yes', '--user', 'cli-careful');

    models.assertDone();
    expect(confirmed.code).toBe(0);
    expect(confirmed.stdout).toMatch(
      /^Done: "Cancel gym membership" is on your list\.\n\n✓ tasks\.create — Cancel gym membership \(t_[a-z0-9]+\)\n$/,
    );
    expect(await inDatabase(tasksOf)).toEqual([{ title: 'Cancel gym membership', priority: 'critical' }]);
    expect(models.sentinelRequests()).toHaveLength(1);
    expect(models.agentRequests('gym')).toHaveLength(1);
  });
});
