import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TurnOutcome } from '../src/agents/index.ts';
import { PgBossQueue } from '../src/jobs/index.ts';
import { emptyUsage } from '../src/llm/index.ts';
import { silentLogger } from '../src/logging/index.ts';
import { SkillRegistry } from '../src/skills/index.ts';
import { WorkflowScheduler } from '../src/workflows/index.ts';
import { type Backend, createTestDatabase } from '../test/support/db.ts';
import { type Bench, type BenchSection, ms, percentile, useBenchDatabase } from './lib.ts';

const RUNS = 100;
const FILES = 500;
/** Each run's clock is set this long before its minute, so the scheduler's timer arms as in steady state. */
const LEAD_MS = 1_300;

function workflowPage(index: number): string {
  return [
    '---',
    `name: workflows.bench_${index}`,
    `description: Generated workflow ${index}`,
    'owner: bench',
    `schedule: "${index % 60} ${index % 24} * * *"`,
    index % 2 === 0 ? 'timezone: Europe/Berlin' : 'timezone: America/New_York',
    '---',
    '',
    `Use tasks.search to list open tasks, then summarize them (workflow ${index}).`,
    '',
  ].join('\n');
}

/**
 * The delay between a scheduled minute and its run's start (the run row's claim), through the
 * real timer, job queue and claim: a clock offset puts each minute 1.3 s ahead, 100 times.
 */
async function precision(backend: Backend): Promise<number[]> {
  const test = await createTestDatabase(backend);
  const root = mkdtempSync(path.join(os.tmpdir(), 'steward-bench-scheduler-'));
  mkdirSync(path.join(root, 'workflows'));
  writeFileSync(
    path.join(root, 'workflows', 'minutely.md'),
    '---\nname: workflows.minutely\ndescription: Every minute\nowner: bench\nschedule: "* * * * *"\ntimezone: UTC\n---\n\nSay hi.\n',
  );
  const registry = new SkillRegistry({ roots: [{ dir: root, source: 'user' }] });
  registry.load();
  const jobs = new PgBossQueue(test.database, silentLogger());
  let offset = 0;
  const now = () => new Date(Date.now() + offset);
  const started: Array<() => void> = [];
  const engine = {
    handle: async (): Promise<TurnOutcome> => {
      started.shift()?.();
      return {
        reply: 'hi',
        conversationId: 'c',
        turnId: crypto.randomUUID(),
        status: 'completed',
        usage: emptyUsage(),
        duplicate: false,
        receipts: [],
      };
    },
  };
  const scheduler = new WorkflowScheduler({
    database: test.database,
    jobs,
    skills: () => registry.snapshot(),
    engine,
    deliver: async () => undefined,
    logger: silentLogger(),
    now,
  });
  const delays: number[] = [];
  try {
    await scheduler.register();
    await jobs.start();
    await scheduler.start();
    for (let index = 0; index < RUNS; index++) {
      const fake = now().getTime();
      const minute = Math.ceil((fake + LEAD_MS) / 60_000) * 60_000;
      offset += minute - LEAD_MS - fake;
      await new Promise<void>((resolve) => started.push(resolve));
      const [row] = await test.database.query<{ started_at: Date; scheduled_for: Date }>(
        `SELECT started_at, scheduled_for FROM workflow_runs WHERE scheduled_for = $1`,
        [new Date(minute).toISOString()],
      );
      delays.push(new Date(row!.started_at).getTime() - new Date(row!.scheduled_for).getTime());
    }
  } finally {
    scheduler.stop();
    await jobs.stop();
    await test.drop();
    rmSync(root, { recursive: true, force: true });
  }
  return delays;
}

/** Registering the schedules of 500 new workflow files: one reload plus the scheduler's sync. */
async function registration(backend: Backend): Promise<{ first: number; again: number }> {
  const test = await createTestDatabase(backend);
  const root = mkdtempSync(path.join(os.tmpdir(), 'steward-bench-schedules-'));
  mkdirSync(path.join(root, 'workflows'));
  const registry = new SkillRegistry({ roots: [{ dir: root, source: 'user' }] });
  registry.load();
  const jobs = new PgBossQueue(test.database, silentLogger());
  const scheduler = new WorkflowScheduler({
    database: test.database,
    jobs,
    skills: () => registry.snapshot(),
    engine: { handle: async () => Promise.reject(new Error('not in this bench')) },
    deliver: async () => undefined,
    logger: silentLogger(),
  });
  try {
    await scheduler.sync(registry.snapshot());
    for (let index = 0; index < FILES; index++)
      writeFileSync(path.join(root, 'workflows', `bench_${index}.md`), workflowPage(index));
    let start = performance.now();
    const count = await scheduler.sync(registry.load());
    const first = performance.now() - start;
    if (count !== FILES) throw new Error(`registered ${count} schedules, expected ${FILES}`);
    start = performance.now();
    await scheduler.sync(registry.load());
    return { first, again: performance.now() - start };
  } finally {
    await jobs.stop();
    await test.drop();
    rmSync(root, { recursive: true, force: true });
  }
}

const bench: Bench = async () => {
  const server = await useBenchDatabase();
  const backends: Backend[] = server ? ['pglite', 'postgres'] : ['pglite'];
  const precisionRows: Array<Array<string | number>> = [];
  const registrationRows: Array<Array<string | number>> = [];
  for (const backend of backends) {
    const delays = await precision(backend);
    precisionRows.push([
      backend,
      delays.length,
      ms(percentile(delays, 50)),
      ms(percentile(delays, 99)),
      ms(Math.max(...delays)),
    ]);
    const { first, again } = await registration(backend);
    registrationRows.push([backend, FILES, ms(first), `${Math.round((FILES / first) * 1000)}/s`, ms(again)]);
  }
  const sections: BenchSection[] = [
    {
      title: 'Scheduler precision',
      description: `Delay from a scheduled minute to its run's start (the run claimed in workflow_runs), through the scheduler's timer, the job queue and the claim; ${RUNS} every-minute runs, the clock offset so each minute comes ${LEAD_MS} ms after the previous run (the agent turn itself is stubbed).`,
      columns: ['backend', 'runs', 'p50', 'p99', 'max'],
      rows: precisionRows,
    },
    {
      title: 'Schedules registered on hot reload',
      description: `${FILES} new workflow files with schedules in two zones: one skill reload plus the scheduler's sync (owner, zone, since-when and last run per schedule), then the same reload with nothing changed.`,
      columns: ['backend', 'files', 'reload + register', 'schedules/s', 'unchanged reload'],
      rows: registrationRows,
    },
  ];
  return sections;
};

export default bench;
