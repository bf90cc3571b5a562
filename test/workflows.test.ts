import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type ResolvedConfig } from '../src/config/index.ts';
import { silentLogger } from '../src/logging/logger.ts';
import { createRuntime, type Runtime } from '../src/runtime.ts';
import { ensureUser } from '../src/users/index.ts';
import { WORKFLOW_RUN_JOB, WorkflowScheduler } from '../src/workflows/index.ts';
import { backends, createTestDatabase, type TestDatabase } from './support/db.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { ROLE_MODELS, writeTestConfig } from './support/steward.ts';

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake?.close();
});

type RunRow = {
  skill: string;
  user_id: string;
  scheduled_for: Date;
  status: string;
  trigger: string;
  turn_id: string | null;
};

for (const backend of backends()) {
  describe(`workflows [${backend}]`, () => {
    let db: TestDatabase;
    let runtime: Runtime;
    let config: ResolvedConfig;
    let clock = new Date('2026-03-28T07:00:00Z');
    const now = () => clock;
    const agentReplies: string[] = [];

    beforeAll(async () => {
      const { dir, env } = writeTestConfig(fake.url);
      config = loadConfig({ env, cwd: dir });
      db = await createTestDatabase(backend);
      runtime = await createRuntime(config, { database: db.database, logger: silentLogger(), now });
      // Every sub-agent answers with the next queued reply (the workflow's final text).
      fake.respondWith((request) => {
        if (request.body.model !== ROLE_MODELS.sub_agent)
          throw new Error(`unexpected ${request.body.model} request`);
        return { text: agentReplies.shift() ?? 'no reply queued' };
      });
    }, 180_000);
    afterAll(async () => {
      fake.respondWith(null);
      await runtime?.close();
      await db?.drop();
    });

    const run = (command: string, userId = 'local') =>
      runtime.executor.execute({
        command,
        caller: { kind: 'cli' },
        user: { id: userId, timezone: 'UTC' },
        channel: 'cli',
        confirmed: true,
      });
    const runs = (skill: string) =>
      db.database.query<RunRow>(
        'SELECT skill, user_id, scheduled_for, status, trigger, turn_id FROM workflow_runs WHERE skill = $1 ORDER BY scheduled_for',
        [skill],
      );
    const notes = (userId: string) =>
      db.database.query<{ content: string }>(
        `SELECT content FROM messages WHERE user_id = $1 AND role = 'assistant' AND turn_id IS NULL ORDER BY id`,
        [userId],
      );
    const drain = () => runtime.jobs.drain([WORKFLOW_RUN_JOB]);
    const workflowFile = (name: string) => path.join(config.skillsDir, 'workflows', `${name}.md`);

    it('workflow.build writes a validated page owned by the user and keeps workflows/SKILL.md current', async () => {
      const result = await run(
        'workflow.build --name morning_plan --description "Plan the day" --steps "Use tasks.search to list open tasks, then summarize them" --schedule "0 9 * * *" --timezone Europe/Berlin',
        'ana',
      );
      expect(result.status, result.content).toBe('ok');
      const text = readFileSync(workflowFile('morning_plan'), 'utf8');
      expect(text).toMatch(/^name: workflows\.morning_plan$/m);
      expect(text).toMatch(/^owner: ana$/m);
      expect(text).toMatch(/^schedule: 0 9 \* \* \*$/m);
      expect(text).toMatch(/^timezone: Europe\/Berlin$/m);
      const index = readFileSync(path.join(config.skillsDir, 'workflows', 'SKILL.md'), 'utf8');
      expect(index).toContain('workflows.morning_plan');
      expect(index).toContain('workflows.daily_digest');
      const snapshot = runtime.skills.load();
      expect(snapshot.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
      expect(snapshot.skills.get('workflows.morning_plan')).toMatchObject({
        owner: 'ana',
        schedule: '0 9 * * *',
      });
    });

    it('refuses unknown skills (naming the closest), bad crons and zones, and writes nothing', async () => {
      const unknown = await run(
        'workflow.build --name bad_one --description "x" --steps "Use tasks.serch and emial.send to do it"',
      );
      expect(unknown.status).toBe('error');
      expect(unknown.content).toContain('unknown skill "tasks.serch" (closest: tasks.search');
      expect(unknown.content).toContain('unknown skill "emial.send" (closest: email.send');
      const cron = await run(
        'workflow.build --name bad_one --description "x" --steps "Use tasks.search" --schedule "0 9 * *"',
      );
      expect(cron.status).toBe('error');
      expect(cron.content).toContain('has 4 fields, not 5');
      const range = await run(
        'workflow.build --name bad_one --description "x" --steps "Use tasks.search" --schedule "0 25 * * *"',
      );
      expect(range.content).toContain('hour 25 is out of range (0-23)');
      const zone = await run(
        'workflow.build --name bad_one --description "x" --steps "Use tasks.search" --schedule "0 9 * * *" --timezone Mars/Olympus',
      );
      expect(zone.status).toBe('error');
      expect(zone.content).toContain('Mars/Olympus');
      expect(existsSync(workflowFile('bad_one'))).toBe(false);
      const theirs = await run('workflow.build --name morning_plan --schedule "0 10 * * *"', 'bob');
      expect(theirs.status).toBe('error');
      expect(theirs.content).toContain('The name workflows.morning_plan is already taken');
      expect(theirs.content).not.toMatch(/\bana\b|Plan the day/);
      expect(readFileSync(workflowFile('morning_plan'), 'utf8')).toMatch(/^owner: ana$/m);
    });

    it('runs at 09:00 Europe/Berlin on both sides of the DST change, as a sub-agent on the page, delivered', async () => {
      clock = new Date('2026-03-28T07:00:00Z');
      await runtime.workflows.start({ timer: false });
      expect(await runtime.workflows.tick()).toEqual({ enqueued: 0, missed: 0 });
      clock = new Date('2026-03-28T07:59:59Z');
      expect((await runtime.workflows.tick()).enqueued).toBe(0);
      clock = new Date('2026-03-28T08:00:01Z'); // 09:00:01 CET
      expect((await runtime.workflows.tick()).enqueued).toBe(1);
      agentReplies.push('Three open tasks today.');
      fake.requests.length = 0;
      expect(await drain()).toBe(1);
      const agentRequest = fake.chatRequests.at(-1)!;
      const shown = JSON.stringify(agentRequest.body.messages);
      expect(shown).toContain('Use tasks.search to list open tasks, then summarize them');
      expect(shown).not.toContain('owner: ana');

      clock = new Date('2026-03-29T06:59:00Z'); // 08:59 CEST
      expect((await runtime.workflows.tick()).enqueued).toBe(0);
      clock = new Date('2026-03-29T07:00:00Z'); // 09:00 CEST
      expect((await runtime.workflows.tick()).enqueued).toBe(1);
      agentReplies.push('Two open tasks today.');
      await drain();

      const rows = await runs('workflows.morning_plan');
      expect(rows.map((row) => [new Date(row.scheduled_for).toISOString(), row.status, row.trigger])).toEqual(
        [
          ['2026-03-28T08:00:00.000Z', 'ok', 'schedule'],
          ['2026-03-29T07:00:00.000Z', 'ok', 'schedule'],
        ],
      );
      expect(rows.every((row) => row.turn_id)).toBe(true);
      // Ana never wrote from a chat channel: the results wait in her conversation.
      expect((await notes('ana')).map((note) => note.content)).toEqual([
        'Three open tasks today.',
        'Two open tasks today.',
      ]);
      const turns = await db.database.query<{ channel: string; status: string }>(
        'SELECT t.channel, t.status FROM turns t JOIN workflow_runs r ON r.turn_id = t.id',
      );
      expect(turns).toEqual([
        { channel: 'scheduled', status: 'completed' },
        { channel: 'scheduled', status: 'completed' },
      ]);
      const [view] = await runtime.workflows.list('ana');
      expect(view).toMatchObject({
        name: 'morning_plan',
        skill: 'workflows.morning_plan',
        schedule: '0 9 * * *',
        timezone: 'Europe/Berlin',
        next_run: '2026-03-30T09:00:00+02:00',
        last_status: 'ok',
      });
      expect(view!.last_run).toMatch(/^2026-03-29T09:00:00\+02:00$/);
    });

    it('runs each scheduled time once when two schedulers share the database', async () => {
      const second = new WorkflowScheduler({
        database: db.database,
        jobs: runtime.jobs,
        skills: () => runtime.skills.snapshot(),
        engine: runtime.engine,
        deliver: (userId, text) => runtime.channels.deliver(userId, text),
        logger: silentLogger(),
        now,
      });
      await second.start({ timer: false });
      clock = new Date('2026-03-30T07:00:00Z');
      await Promise.all([runtime.workflows.tick(), second.tick()]);
      agentReplies.push('Once.');
      await drain();
      await Promise.all([runtime.workflows.tick(), second.tick()]);
      await drain();
      const rows = (await runs('workflows.morning_plan')).filter(
        (row) => new Date(row.scheduled_for).toISOString() === '2026-03-30T07:00:00.000Z',
      );
      expect(rows).toHaveLength(1);
      expect((await notes('ana')).filter((note) => note.content === 'Once.')).toHaveLength(1);
      second.stop();
    });

    it('on start, runs the latest time missed within catch_up and records older ones as missed, telling the user', async () => {
      clock = new Date('2026-04-01T10:00:30Z');
      writeFileSync(
        workflowFile('hourly_check'),
        '---\nname: workflows.hourly_check\ndescription: Hourly check\nowner: carl\nschedule: "0 * * * *"\ntimezone: UTC\n---\n\nSay hello.\n',
      );
      writeFileSync(
        workflowFile('strict_check'),
        '---\nname: workflows.strict_check\ndescription: Never late\nowner: carl\nschedule: "0 * * * *"\ntimezone: UTC\ncatch_up: 0\n---\n\nSay hi.\n',
      );
      await runtime.workflows.sync(runtime.skills.load());
      // Steward is down from 10:00:30 to 12:20: the 11:00 and 12:00 runs were missed.
      clock = new Date('2026-04-01T12:20:00Z');
      const restarted = new WorkflowScheduler({
        database: db.database,
        jobs: runtime.jobs,
        skills: () => runtime.skills.snapshot(),
        engine: runtime.engine,
        deliver: (userId, text) => runtime.channels.deliver(userId, text),
        logger: silentLogger(),
        now,
      });
      agentReplies.push('Hello (late).');
      await restarted.start({ timer: false });
      await drain();
      const hourly = await runs('workflows.hourly_check');
      expect(
        hourly.map((row) => [new Date(row.scheduled_for).toISOString(), row.status, row.trigger]),
      ).toEqual([
        ['2026-04-01T11:00:00.000Z', 'missed', 'schedule'],
        ['2026-04-01T12:00:00.000Z', 'ok', 'catch_up'],
      ]);
      const strict = await runs('workflows.strict_check');
      expect(strict.map((row) => [new Date(row.scheduled_for).toISOString(), row.status])).toEqual([
        ['2026-04-01T11:00:00.000Z', 'missed'],
        ['2026-04-01T12:00:00.000Z', 'missed'],
      ]);
      const told = (await notes('carl')).map((note) => note.content);
      expect(told).toContain('Hello (late).');
      expect(
        told.some((note) =>
          note.startsWith('Missed: workflow hourly_check was due at 2026-04-01T11:00:00+00:00'),
        ),
      ).toBe(true);
      expect(told.some((note) => note.includes('strict_check') && note.includes('catch_up is 0'))).toBe(true);
      // Starting again finds nothing new to run or record.
      expect(await restarted.tick()).toEqual({ enqueued: 0, missed: 0 });
      restarted.stop();
      const views = await runtime.workflows.list('carl');
      expect(views.find((view) => view.name === 'strict_check')).toMatchObject({
        last_status: 'missed',
        catch_up: 0,
      });
    });

    it('keeps the last valid schedule through an invalid edit, and stops when the schedule is removed', async () => {
      const file = workflowFile('hourly_check');
      const valid = readFileSync(file, 'utf8');
      writeFileSync(file, valid.replace('schedule: "0 * * * *"', 'schedule: "0 * * *"'));
      const snapshot = runtime.skills.load();
      expect(
        snapshot.diagnostics.some((d) => d.path === file && d.message.includes('has 4 fields, not 5')),
      ).toBe(true);
      await runtime.workflows.sync(snapshot);
      expect(
        (await runtime.workflows.list('carl')).find((view) => view.name === 'hourly_check')?.schedule,
      ).toBe('0 * * * *');
      writeFileSync(file, valid.replace('schedule: "0 * * * *"\n', ''));
      await runtime.workflows.sync(runtime.skills.load());
      expect((await runtime.workflows.list('carl')).map((view) => view.name)).toEqual(['strict_check']);
      clock = new Date('2026-04-01T13:00:01Z');
      await runtime.workflows.tick();
      agentReplies.push('Hi.');
      await drain();
      const at13 = (rows: RunRow[]) =>
        rows.filter((row) => new Date(row.scheduled_for).toISOString() === '2026-04-01T13:00:00.000Z');
      expect(at13(await runs('workflows.strict_check')).map((row) => row.status)).toEqual(['ok']);
      expect(at13(await runs('workflows.hourly_check'))).toEqual([]);
      expect((await runs('workflows.hourly_check')).map((row) => row.status)).toEqual(['missed', 'ok']);
    });

    it('records delivery_failed when the result cannot be delivered, and a failed run says what failed', async () => {
      const failing = new WorkflowScheduler({
        database: db.database,
        jobs: runtime.jobs,
        skills: () => runtime.skills.snapshot(),
        engine: runtime.engine,
        deliver: async () => {
          throw new Error('outbox unavailable');
        },
        logger: silentLogger(),
        now,
      });
      clock = new Date('2026-04-01T13:30:00Z');
      agentReplies.push('Lost.');
      const result = await failing.runNow('strict_check');
      expect(result).toMatchObject({ run: { status: 'delivery_failed', trigger: 'manual' } });
      expect('run' in result && result.run.error).toContain('outbox unavailable');

      const delivered: string[] = [];
      const broken = new WorkflowScheduler({
        database: db.database,
        jobs: runtime.jobs,
        skills: () => runtime.skills.snapshot(),
        engine: {
          handle: async () => {
            throw new Error('the engine is down');
          },
        },
        deliver: async (_user, text) => {
          delivered.push(text);
        },
        logger: silentLogger(),
        now,
      });
      clock = new Date('2026-04-01T13:31:00Z');
      const failed = await broken.runNow('workflows.strict_check', 'carl');
      expect(failed).toMatchObject({ run: { status: 'failed' } });
      expect(delivered).toEqual(['Workflow strict_check failed: the engine is down']);
      expect(await broken.runNow('nothing_here')).toMatchObject({
        problem: expect.stringContaining('No workflow'),
      });
      expect(await broken.runNow('strict_check', 'ana')).toMatchObject({
        problem: expect.stringContaining('No workflow'),
      });
    });

    it('reminds of a task due at 09:00 in the user zone once, through deliver', async () => {
      await ensureUser(db.database, 'dora', { timezone: 'Europe/Berlin' });
      expect((await run('tasks.create --title "File taxes" --due 2026-04-02', 'dora')).status).toBe('ok');
      clock = new Date('2026-04-02T06:59:00Z'); // 08:59 in Berlin
      expect(await runtime.workflows.remind()).toBe(0);
      clock = new Date('2026-04-02T07:00:00Z');
      expect(await runtime.workflows.remind()).toBe(1);
      expect(await runtime.workflows.remind()).toBe(0);
      const told = (await notes('dora')).map((note) => note.content);
      expect(told).toHaveLength(1);
      expect(told[0]).toMatch(/^Reminder: a task is due:\n- File taxes \[t_[0-9a-z]{8}\] — due 2026-04-02$/);
    });

    it('lets a paused schedule’s times pass unrun until it is resumed, for its own user only', async () => {
      const scheduled = async () =>
        (await runs('workflows.morning_plan')).filter((row) => row.trigger !== 'manual').length;
      const before = await scheduled();
      expect(await runtime.workflows.setPaused('morning_plan', 'bob', true)).toEqual({
        problem: 'No schedule "morning_plan" for user bob.',
      });
      expect(await runtime.workflows.setPaused('morning_plan', 'ana', true)).toEqual({
        skill: 'workflows.morning_plan',
      });
      expect(
        (await runtime.workflows.list('ana')).find((view) => view.name === 'morning_plan'),
      ).toMatchObject({
        paused: true,
        next_run: null,
      });
      clock = new Date('2026-04-03T07:00:01Z'); // 09:00:01 in Berlin
      await runtime.workflows.tick();
      await drain();
      expect(await scheduled()).toBe(before);
      await runtime.workflows.setPaused('workflows.morning_plan', 'ana', false);
      clock = new Date('2026-04-04T07:00:01Z');
      await runtime.workflows.tick();
      agentReplies.push('Resumed and run.');
      await drain();
      const rows = (await runs('workflows.morning_plan')).filter((row) => row.trigger !== 'manual');
      expect(rows).toHaveLength(before + 1);
      expect(new Date(rows.at(-1)!.scheduled_for).toISOString()).toBe('2026-04-04T07:00:00.000Z');
    });
  });
}
