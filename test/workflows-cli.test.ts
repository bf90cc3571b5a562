import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'vitest';
import { ensureUser } from '../src/users/index.ts';
import { freePort, runCli, startServer } from './support/cli.ts';
import { createTestDatabase, type TestDatabase } from './support/db.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { FAKE_BOT_TOKEN, startFakeTelegram } from './support/fake-telegram.ts';
import { ROLE_MODELS, writeTestConfig } from './support/steward.ts';

type ScheduleJson = {
  name: string;
  skill: string;
  user: string;
  schedule: string;
  timezone: string;
  next_run: string | null;
  last_run: string | null;
  last_status: string | null;
  delivery: { status: string; channel: string | null } | null;
};

/** A CLI call on a loaded 2-core machine can take a minute. */
const CLI_TIMEOUT_MS = 150_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const started = Date.now();
/** Progress lines on stderr: process-level steps are slow on a loaded machine. */
const step = (what: string) =>
  process.stderr.write(`[workflows-cli +${((Date.now() - started) / 1000).toFixed(1)}s] ${what}\n`);

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  step(`waiting for ${what}`);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/**
 * Sub-agent requests answer with a numbered result; anything else fails the request. Counts how
 * many were answered, in all or (with `text`) of those whose messages mention `text`, and
 * lists the replies to those.
 */
function answerAgents(fake: FakeLlm): {
  calls: (text?: string) => number;
  replies: (text: string) => string[];
} {
  const requests: Array<{ messages: string; reply: string }> = [];
  fake.respondWith((request) => {
    if (request.body.model !== ROLE_MODELS.sub_agent)
      throw new Error(`unexpected ${request.body.model} request`);
    const reply = `Workflow result ${requests.length + 1}`;
    requests.push({ messages: JSON.stringify(request.body.messages), reply });
    return { text: reply };
  });
  const mentioning = (text?: string) =>
    text === undefined ? requests : requests.filter((request) => request.messages.includes(text));
  return {
    calls: (text) => mentioning(text).length,
    replies: (text) => mentioning(text).map((request) => request.reply),
  };
}

/*
 * Both cases wait for a real minute to start (a cron schedule firing in a real process): one
 * such minute each, the earlier times being a schedule removed before it and a time caught up
 * at start. Neither depends on the other, so they run side by side, each with its own fakes
 * and servers, and the file waits for that minute once; what does not depend on that minute
 * runs while it is awaited.
 */
describe.concurrent('workflows through the CLI and a running server', { timeout: 600_000 }, () => {
  it('builds an every-minute workflow that runs and is delivered to the primary channel, and stops when its schedule is removed', async ({
    expect,
    onTestFinished,
  }) => {
    const [fake, telegram] = await Promise.all([startFakeLlm(), startFakeTelegram()]);
    onTestFinished(async () => {
      await fake.close();
      await telegram.close();
    });
    const { calls: agentCalls, replies } = answerAgents(fake);
    const { env: baseEnv } = writeTestConfig(
      fake.url,
      `channels:\n  telegram: { bot_token: "${FAKE_BOT_TOKEN}", api_root: "${telegram.url}" }\n`,
    );
    const env: Record<string, string> = { ...baseEnv, PORT: String(await freePort()) };
    step('starting the server');
    const server = await startServer({ env, readyTimeoutMs: 180_000 });
    step('server ready');
    const cli = (args: string[]) => runCli(args, { env, timeoutMs: CLI_TIMEOUT_MS });
    try {
      const file = path.join(env.STEWARD_DATA_DIR!, 'skills', 'workflows', 'acc_minutely.md');
      step('building');
      const minutelySteps = 'Use tasks.search to list my open tasks and summarize them';
      const [linked, built] = await Promise.all([
        // acc_user's Telegram identity, linked through the server: deliveries go there.
        cli(['users', 'link', 'telegram:555', 'acc_user']),
        cli([
          'run',
          `workflow.build --name acc_minutely --description "Every minute" --steps "${minutelySteps}" --schedule "* * * * *" --timezone Europe/Berlin`,
          '--user',
          'acc_user',
        ]),
      ]);
      expect(linked.code, linked.stderr).toBe(0);
      expect(built.stderr).toBe('');
      expect(built.code).toBe(0);
      expect(readFileSync(file, 'utf8')).toMatch(/^owner: acc_user$/m);

      // Waits poll the API (what the CLI calls); the CLI itself is checked once for each output.
      const schedulesNow = async () =>
        ((await (await fetch(`${server.url}/api/schedules`)).json()) as { schedules: ScheduleJson[] })
          .schedules;
      // A schedule removed before its time comes never runs: acc_gone gets an every-minute
      // schedule and loses it, and the first minute after that runs acc_minutely and passes
      // acc_gone by.
      const goneSteps = 'Use tasks.search to count my tasks for the removed schedule';
      const builtMinute = Math.floor(Date.now() / 60_000);
      const gone = await cli([
        'run',
        `workflow.build --name acc_gone --description "Removed" --steps "${goneSteps}" --schedule "* * * * *"`,
        '--user',
        'acc_user',
      ]);
      expect(gone.code, gone.stderr).toBe(0);
      await until(
        'acc_gone to be listed',
        async () => (await schedulesNow()).find((schedule) => schedule.name === 'acc_gone'),
        5_000,
      );
      // Editing the schedule away stops it within 5 s.
      const off = await cli(['run', 'workflow.build --name acc_gone --schedule off', '--user', 'acc_user']);
      expect(off.code).toBe(0);
      await until(
        'the schedule to go',
        async () =>
          (await schedulesNow()).some((schedule) => schedule.name === 'acc_gone') ? undefined : true,
        5_000,
      );
      step('schedule removed');
      // A loaded machine may have let a minute start while it was scheduled: that run, if any,
      // began before the schedule went and is counted before the minute that must pass it by.
      if (Math.floor(Date.now() / 60_000) !== builtMinute) await sleep(10_000);
      const goneAt = Date.now();
      const goneCalls = agentCalls(goneSteps);
      const minutelyBefore = agentCalls(minutelySteps);

      // A run of a minute after acc_gone's schedule went, finished.
      const finished = (schedule: ScheduleJson | undefined) =>
        schedule?.last_status && schedule.last_status !== 'running' && Date.parse(schedule.last_run!) > goneAt
          ? schedule
          : undefined;
      const scheduledRun = until(
        'a scheduled run to finish',
        async () => finished((await schedulesNow()).find((entry) => entry.name === 'acc_minutely')),
        100_000,
      );
      scheduledRun.catch(() => undefined); // awaited below, after what runs meanwhile
      // Meanwhile, what does not wait for that minute.
      const rejected = await cli([
        'run',
        'workflow.build --name acc_typo --description "x" --steps "Use tasks.serch to list tasks" --schedule "* * * * *"',
        '--user',
        'acc_user',
        '--json',
      ]);
      expect(rejected.code).toBe(1);
      expect(JSON.parse(rejected.stdout)).toMatchObject({
        status: 'error',
        content: expect.stringContaining('tasks.search'),
      });
      expect(existsSync(path.join(path.dirname(file), 'acc_typo.md'))).toBe(false);

      const listedJson = await cli(['schedules', '--json']);
      const listed = (JSON.parse(listedJson.stdout) as ScheduleJson[]).find(
        (entry) => entry.name === 'acc_minutely',
      )!;
      expect(listed).toMatchObject({
        skill: 'workflows.acc_minutely',
        user: 'acc_user',
        schedule: '* * * * *',
        timezone: 'Europe/Berlin',
      });
      // An every-minute schedule may already have run by the time it is listed.
      expect('last_run' in listed && 'last_status' in listed).toBe(true);
      expect([null, 'running', 'ok']).toContain(listed.last_status);
      expect(listed.next_run).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:00\+0[12]:00$/);

      // `schedules run` runs the workflow without a schedule now, through the server.
      step('running now');
      const now = await cli(['schedules', 'run', 'acc_gone', '--json']);
      expect(now.stderr).toBe('');
      expect(now.code).toBe(0);
      expect(JSON.parse(now.stdout)).toMatchObject({
        skill: 'workflows.acc_gone',
        user: 'acc_user',
        status: 'ok',
        trigger: 'manual',
      });
      expect(agentCalls(goneSteps)).toBe(goneCalls + 1);
      const missing = await cli(['schedules', 'run', 'no_such_workflow']);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('No workflow "no_such_workflow"');

      await scheduledRun;
      // Then the CLI: one call, unless it straddles the next minute and catches that run going.
      const ran = await until(
        'the CLI to show the finished run',
        async () => {
          const result = await cli(['schedules', '--user', 'acc_user', '--json']);
          return finished(
            (JSON.parse(result.stdout) as ScheduleJson[]).find((entry) => entry.name === 'acc_minutely'),
          );
        },
        100_000,
      );
      expect(ran.last_status).toBe('ok');
      expect(ran.last_run).toMatch(/\+0[12]:00$/);
      // The first run of acc_minutely after acc_gone's schedule went is what was delivered.
      const delivered = await until(
        'the delivery',
        async () => {
          const reply = replies(minutelySteps)[minutelyBefore];
          return telegram.sent.find((message) => reply !== undefined && message.text === reply);
        },
        10_000,
      );
      expect(delivered.chat_id).toBe('555');

      step('delivered');
      // The receipt follows the outbox's outcome (a later minute's run may be pending meanwhile).
      await until(
        'the receipt to say delivered',
        async () => {
          const entry = (await schedulesNow()).find((schedule) => schedule.name === 'acc_minutely');
          return entry?.delivery?.status === 'delivered' ? entry : undefined;
        },
        100_000,
      );
      const table = await cli(['schedules', '--user', 'acc_user']);
      expect(table.stdout).toMatch(/acc_minutely\s+acc_user\s+\* \* \* \* \*\s+Europe\/Berlin/);
      expect(table.stdout).toMatch(/\bdelivery\b/);
      expect(table.stdout).toMatch(/(delivered|pending) on telegram/);

      // Past the minute that ran acc_minutely: nothing more of acc_gone's ran than the run now.
      expect(agentCalls(minutelySteps)).toBeGreaterThan(minutelyBefore);
      expect(agentCalls(goneSteps)).toBe(goneCalls + 1);
    } finally {
      await server.stop();
      fake.respondWith(null);
    }
  });

  it.runIf(process.env.TEST_DATABASE_URL)(
    'runs each scheduled time once with two instances on one Postgres',
    async ({ expect, onTestFinished }) => {
      const fake = await startFakeLlm();
      onTestFinished(() => fake.close());
      const { calls: agentCalls } = answerAgents(fake);
      let db: TestDatabase | undefined;
      const servers: Array<Awaited<ReturnType<typeof startServer>>> = [];
      try {
        db = await createTestDatabase('postgres');
        const skillsDir = mkdtempSync(path.join(os.tmpdir(), 'steward-shared-skills-'));
        mkdirSync(path.join(skillsDir, 'workflows'));
        writeFileSync(
          path.join(skillsDir, 'workflows', 'twin_minutely.md'),
          '---\nname: workflows.twin_minutely\ndescription: Every minute, on two instances\nowner: twin_user\nschedule: "* * * * *"\ntimezone: UTC\n---\n\nSay what time it is.\n',
        );
        // Registered half a minute before the current minute began, as by an instance that has
        // stopped since: both instances start with that minute's time missed and catch it up,
        // then run the next minute's on time.
        await ensureUser(db.database, 'twin_user');
        const since = new Date(Date.now() - (Date.now() % 60_000) - 30_000);
        await db.database.query(
          `INSERT INTO workflow_schedules (user_id, skill, cron, timezone, since) VALUES ('twin_user', 'workflows.twin_minutely', '* * * * *', 'UTC', $1)`,
          [since.toISOString()],
        );
        // Both instances start side by side, as a scaled-out deployment does.
        await Promise.all(
          [0, 1].map(async () => {
            const { env } = writeTestConfig(fake.url);
            const port = String(await freePort());
            servers.push(
              await startServer({
                env: { ...env, DATABASE_URL: db!.url!, STEWARD_SKILLS_DIR: skillsDir, PORT: port },
              }),
            );
          }),
        );
        const query = () =>
          db!.database.query<{ scheduled_for: Date; status: string; trigger: string }>(
            `SELECT scheduled_for, status, trigger FROM workflow_runs WHERE skill = 'workflows.twin_minutely' ORDER BY scheduled_for`,
          );
        await until(
          'two scheduled times to run',
          async () => ((await query()).filter((row) => row.status === 'ok').length >= 2 ? true : undefined),
          150_000,
        );
        for (const server of servers.splice(0)) await server.stop();
        const rows = await query();
        const ok = rows.filter((row) => row.status === 'ok');
        expect(ok.length).toBeGreaterThanOrEqual(2);
        expect(ok.map((row) => row.trigger)).toContain('schedule');
        // At most one agent run per scheduled time, whichever instance took it.
        expect(agentCalls()).toBeGreaterThanOrEqual(ok.length);
        expect(agentCalls()).toBeLessThanOrEqual(rows.length);
        const times = rows.map((row) => new Date(row.scheduled_for).toISOString());
        expect(new Set(times).size).toBe(times.length);
        expect(times.every((time) => time.endsWith(':00.000Z'))).toBe(true);
      } finally {
        for (const server of servers) await server.stop();
        fake.respondWith(null);
        await db?.drop();
      }
    },
  );
});
