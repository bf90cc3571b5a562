import { errorMessage } from '../errors.ts';
import type { JobQueue } from '../jobs/index.ts';
import {
  type CronSchedule,
  nextFireTime,
  parseCron,
  type SkillDefinition,
  type SkillSnapshot,
} from '../skills/index.ts';
import { formatInZone } from '../time/index.ts';
import { ensureUser } from '../users/index.ts';
import type { DeliveryReceipt } from './delivery-receipt.ts';
import { recordMissed } from './missed-runs.ts';
import {
  latestRuns,
  pausedSchedules,
  type RunStatus,
  type RunTrigger,
  registerSchedule,
  removeSchedules,
  runsOf,
  setSchedulePaused,
  type WorkflowRun,
} from './run-store.ts';
import { type ReminderSettings, sendTaskReminders } from './task-reminders.ts';
import { RUN_EXPIRY_SECONDS, type RunnerDeps, runWorkflow } from './workflow-runner.ts';

export const WORKFLOW_RUN_JOB = 'workflow-run';
/** The owner of a scheduled skill file without `owner`. */
export const DEFAULT_OWNER = 'local';
export const DEFAULT_CATCH_UP_SECONDS = 3600;
/**
 * A scheduled time this long before the scheduler started was missed while Steward was down
 * (the catch-up policy decides); a later one is an ordinary run, however late its tick.
 */
const STARTUP_GRACE_MS = 5_000;
/** At most this many missed times are recorded per schedule in one pass (a long outage). */
const MAX_MISSED_RECORDED = 200;

type RunJob = { userId: string; skill: string; scheduledFor: string; trigger: RunTrigger; timezone: string };

/** A schedule as declared by a skill file, resolved: owner, cron and zone. */
export type DeclaredSchedule = {
  userId: string;
  skill: SkillDefinition;
  cron: CronSchedule;
  timezone: string;
  catchUpSeconds: number;
};

type ActiveSchedule = DeclaredSchedule & { next: number | null };

/** One row of `steward schedules --json`. */
export type ScheduleView = {
  name: string;
  skill: string;
  user: string;
  description: string;
  schedule: string;
  timezone: string;
  catch_up: number;
  next_run: string | null;
  last_run: string | null;
  last_status: RunStatus | null;
  /** Where the last run's output went and whether it arrived; null when nothing was delivered. */
  delivery: DeliveryReceipt | null;
  /** Paused on the dashboard: its times pass without a run (`next_run` is then null). */
  paused: boolean;
};

/** One past run with where its output went (the output is its turn's reply). */
export type RunWithDelivery = { run: WorkflowRun; delivery: DeliveryReceipt | null };

export type SchedulerDeps = Omit<RunnerDeps, 'now'> & {
  jobs: JobQueue;
  now?: () => Date;
  /** Default `catch_up` of schedules that do not set one (seconds). */
  defaultCatchUpSeconds?: () => number;
  /** Task reminders: checked once a minute by the ticking scheduler (none: no reminders). */
  reminders?: () => ReminderSettings;
  /** Tells a user something outside any turn (missed runs). Defaults to `deliver`. */
  notify?: (userId: string, text: string) => Promise<unknown>;
  /** The delivery receipts of runs' outputs (channels' `deliveryReceipts`); none: no receipts shown. */
  receipts?: (deliveryIds: string[]) => Promise<Map<string, DeliveryReceipt>>;
};

const keyOf = (userId: string, skill: string) => `${userId} ${skill}`;

/**
 * Turns `schedule` frontmatter into runs. `sync()` (at start and on every skill reload)
 * registers what the files declare; `tick()` (every second, or at the next due minute)
 * enqueues each due scheduled time as a job keyed by user, skill and time, so that every
 * instance may enqueue it and it still runs once. Times missed while no instance ran are
 * found at start from the last recorded run: the latest one runs when it is less than
 * `catch_up` old, the others are recorded as `missed` and the user is told.
 */
export class WorkflowScheduler {
  readonly #deps: SchedulerDeps;
  readonly #now: () => Date;
  readonly #active = new Map<string, ActiveSchedule>();
  #serial: Promise<unknown> = Promise.resolve();
  #startedAt: number;
  #timer: NodeJS.Timeout | null = null;
  #stopped = false;
  #remindedMinute = -1;

  constructor(deps: SchedulerDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? (() => new Date());
    this.#startedAt = this.#now().getTime();
  }

  #runnerDeps(): RunnerDeps {
    return { ...this.#deps, now: this.#now };
  }

  /** Declares the run job's queue; its worker runs due workflows. */
  async register(): Promise<void> {
    await this.#deps.jobs.register<RunJob>(
      WORKFLOW_RUN_JOB,
      async (job, context) => {
        await runWorkflow(this.#runnerDeps(), {
          userId: job.userId,
          skill: job.skill,
          scheduledFor: new Date(job.scheduledFor),
          trigger: job.trigger,
          timezone: job.timezone,
          jobId: context.jobId,
        });
      },
      { retryLimit: 2, expireInSeconds: RUN_EXPIRY_SECONDS, singletonPerKey: true, concurrency: 2 },
    );
  }

  /**
   * Registers the current schedules, then handles times due or missed while Steward was down;
   * ticks from now on (`timer: false`: only when `tick()` is called, for tests with a fake clock).
   */
  async start(options: { timer?: boolean } = {}): Promise<void> {
    this.#startedAt = this.#now().getTime();
    await this.sync(this.#deps.skills());
    await this.tick();
    if (options.timer !== false) this.#arm();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }

  #arm(): void {
    if (this.#stopped) return;
    const now = this.#now().getTime();
    let due = Number.POSITIVE_INFINITY;
    for (const schedule of this.#active.values())
      if (schedule.next !== null) due = Math.min(due, schedule.next);
    // Wake at the due minute (not up to a second after it), and at least every second.
    const delay = Math.max(10, Math.min(1000, due - now));
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.tick()
        .catch((error) => this.#deps.logger.error({ err: error }, 'scheduler tick failed'))
        .finally(() => this.#arm());
    }, delay);
    this.#timer.unref();
  }

  #serialized<T>(work: () => Promise<T>): Promise<T> {
    const result = this.#serial.then(work, work);
    this.#serial = result.catch(() => undefined);
    return result;
  }

  /** The schedules `snapshot` declares, each with its owner and zone (the owner's profile zone by default). */
  async declared(snapshot: SkillSnapshot): Promise<DeclaredSchedule[]> {
    const zones = new Map<string, string>();
    const declared: DeclaredSchedule[] = [];
    for (const skill of snapshot.skills.values()) {
      if (!skill.schedule) continue;
      const cron = parseCron(skill.schedule);
      if (!cron.ok) continue; // the registry refuses such files; never here
      const userId = skill.owner ?? DEFAULT_OWNER;
      let timezone = skill.timezone;
      if (!timezone) {
        timezone = zones.get(userId) ?? (await ensureUser(this.#deps.database, userId)).timezone;
        zones.set(userId, timezone);
      }
      declared.push({
        userId,
        skill,
        cron: cron.cron,
        timezone,
        catchUpSeconds:
          skill.catchUpSeconds ?? this.#deps.defaultCatchUpSeconds?.() ?? DEFAULT_CATCH_UP_SECONDS,
      });
    }
    return declared;
  }

  /** Registers added and changed schedules and drops removed ones. Returns how many are active. */
  sync(snapshot: SkillSnapshot): Promise<number> {
    return this.#serialized(async () => {
      const { database } = this.#deps;
      const now = this.#now();
      const declared = await this.declared(snapshot);
      const wanted = new Set<string>();
      const users = new Set<string>();
      for (const schedule of declared) {
        const key = keyOf(schedule.userId, schedule.skill.name);
        wanted.add(key);
        const current = this.#active.get(key);
        if (
          current &&
          current.cron.expression === schedule.cron.expression &&
          current.timezone === schedule.timezone
        ) {
          this.#active.set(key, { ...schedule, next: current.next });
          continue;
        }
        if (!users.has(schedule.userId)) {
          await ensureUser(database, schedule.userId);
          users.add(schedule.userId);
        }
        const { since, latest } = await registerSchedule(database, {
          userId: schedule.userId,
          skill: schedule.skill.name,
          cron: schedule.cron.expression,
          timezone: schedule.timezone,
          now,
        });
        const from = Math.max(since.getTime(), latest?.getTime() ?? 0);
        const next = nextFireTime(schedule.cron, schedule.timezone, from)?.getTime() ?? null;
        this.#active.set(key, { ...schedule, next });
        this.#deps.logger.info(
          {
            skill: schedule.skill.name,
            userId: schedule.userId,
            cron: schedule.cron.expression,
            timezone: schedule.timezone,
          },
          current ? 'schedule changed' : 'schedule registered',
        );
      }
      for (const [key, schedule] of this.#active) {
        if (wanted.has(key)) continue;
        this.#active.delete(key);
        this.#deps.logger.info({ skill: schedule.skill.name, userId: schedule.userId }, 'schedule removed');
      }
      await removeSchedules(
        database,
        [...this.#active.values()].map((schedule) => ({
          userId: schedule.userId,
          skill: schedule.skill.name,
        })),
      );
      if (this.#timer && !this.#stopped) {
        clearTimeout(this.#timer);
        this.#arm();
      }
      return this.#active.size;
    });
  }

  /**
   * Handles every scheduled time up to now: enqueues due runs (a catch-up run for the latest
   * time missed while down, when within `catch_up`), records the other missed times and tells
   * their owners. Returns the scheduled times it enqueued or recorded.
   */
  tick(): Promise<{ enqueued: number; missed: number }> {
    return this.#serialized(async () => {
      const now = this.#now().getTime();
      let enqueued = 0;
      let missed = 0;
      for (const schedule of this.#active.values()) {
        const due: number[] = [];
        while (schedule.next !== null && schedule.next <= now) {
          due.push(schedule.next);
          schedule.next = nextFireTime(schedule.cron, schedule.timezone, schedule.next)?.getTime() ?? null;
          if (due.length > MAX_MISSED_RECORDED) {
            // A very long outage: the oldest times are not recorded one by one.
            due.shift();
          }
        }
        if (due.length === 0) continue;
        // Paused (on any instance): its times pass unrun and unrecorded, as if it had none.
        if (
          (await pausedSchedules(this.#deps.database, schedule.userId)).has(
            keyOf(schedule.userId, schedule.skill.name),
          )
        )
          continue;
        const whileDown = due.filter((time) => time < this.#startedAt - STARTUP_GRACE_MS);
        const onTime = due.filter((time) => time >= this.#startedAt - STARTUP_GRACE_MS);
        const lost: number[] = [];
        if (whileDown.length > 0) {
          const latest = whileDown.at(-1)!;
          const catchUp = onTime.length === 0 && now - latest <= schedule.catchUpSeconds * 1000;
          lost.push(...(catchUp ? whileDown.slice(0, -1) : whileDown));
          if (catchUp) {
            await this.#enqueue(schedule, latest, 'catch_up');
            enqueued++;
          }
        }
        for (const time of onTime) {
          await this.#enqueue(schedule, time, 'schedule');
          enqueued++;
        }
        missed += await recordMissed(
          {
            ...this.#deps,
            notify:
              this.#deps.notify ?? ((userId, text) => this.#deps.deliver(userId, text, { source: 'notice' })),
          },
          schedule,
          lost,
          this.#now(),
        );
      }
      const minute = Math.floor(now / 60_000);
      if (this.#deps.reminders && minute !== this.#remindedMinute) {
        this.#remindedMinute = minute;
        await this.#remind().catch((error) =>
          this.#deps.logger.warn({ err: errorMessage(error) }, 'task reminders failed'),
        );
      }
      return { enqueued, missed };
    });
  }

  /** Sends the task reminders that are due now; returns how many tasks were reminded. */
  remind(): Promise<number> {
    return this.#serialized(() => this.#remind());
  }

  #remind(): Promise<number> {
    const settings = this.#deps.reminders?.();
    if (!settings) return Promise.resolve(0);
    return sendTaskReminders(this.#deps, settings, this.#now());
  }

  async #enqueue(schedule: ActiveSchedule, time: number, trigger: RunTrigger): Promise<void> {
    const scheduledFor = new Date(time).toISOString();
    await this.#deps.jobs.enqueue<RunJob>(
      WORKFLOW_RUN_JOB,
      {
        userId: schedule.userId,
        skill: schedule.skill.name,
        scheduledFor,
        trigger,
        timezone: schedule.timezone,
      },
      { singletonKey: `${schedule.userId}:${schedule.skill.name}:${scheduledFor}` },
    );
  }

  /** Every declared schedule (one user's, or everyone's) with its next and last run. */
  async list(userId?: string): Promise<ScheduleView[]> {
    const now = this.#now();
    const declared = (await this.declared(this.#deps.skills())).filter(
      (schedule) => userId === undefined || schedule.userId === userId,
    );
    const [runs, paused] = await Promise.all([
      latestRuns(this.#deps.database, userId),
      pausedSchedules(this.#deps.database, userId),
    ]);
    const latest = new Map(runs.map((run) => [keyOf(run.userId, run.skill), run]));
    const receipts = await this.#receipts(runs);
    return declared
      .map((schedule) => {
        const key = keyOf(schedule.userId, schedule.skill.name);
        const last = latest.get(key);
        const isPaused = paused.has(key);
        const next = isPaused ? null : nextFireTime(schedule.cron, schedule.timezone, now);
        return {
          name: schedule.skill.action,
          skill: schedule.skill.name,
          user: schedule.userId,
          description: schedule.skill.description,
          schedule: schedule.cron.expression,
          timezone: schedule.timezone,
          catch_up: schedule.catchUpSeconds,
          next_run: next ? formatInZone(next, schedule.timezone) : null,
          last_run: last ? formatInZone(last.startedAt ?? last.scheduledFor, schedule.timezone) : null,
          last_status: last?.status ?? null,
          delivery: (last?.deliveryId && receipts.get(last.deliveryId)) || null,
          paused: isPaused,
        };
      })
      .sort((a, b) => (a.user === b.user ? (a.skill < b.skill ? -1 : 1) : a.user < b.user ? -1 : 1));
  }

  /**
   * Pauses or resumes one user's schedule (by name or full skill name). Resolves with a message
   * saying why not when that user has no such schedule.
   */
  async setPaused(
    name: string,
    userId: string,
    paused: boolean,
  ): Promise<{ skill: string } | { problem: string }> {
    const schedule = (await this.declared(this.#deps.skills())).find(
      (entry) => entry.userId === userId && (entry.skill.name === name || entry.skill.action === name),
    );
    if (!schedule) return { problem: `No schedule "${name}" for user ${userId}.` };
    const key = { userId, skill: schedule.skill.name };
    let done = await setSchedulePaused(this.#deps.database, key, paused ? this.#now() : null);
    if (!done) {
      // Declared but not registered yet (its file was just written): register it, then pause.
      await this.sync(this.#deps.skills());
      done = await setSchedulePaused(this.#deps.database, key, paused ? this.#now() : null);
    }
    if (!done) return { problem: `${schedule.skill.name} is not active: is the scheduler running?` };
    this.#deps.logger.info(
      { skill: schedule.skill.name, userId },
      paused ? 'schedule paused' : 'schedule resumed',
    );
    return { skill: schedule.skill.name };
  }

  /** One user's latest runs of a workflow, newest first, each with its delivery receipt. */
  async runs(skill: string, userId: string, limit = 10): Promise<RunWithDelivery[]> {
    const runs = await runsOf(this.#deps.database, { userId, skill }, limit);
    const receipts = await this.#receipts(runs);
    return runs.map((run) => ({ run, delivery: (run.deliveryId && receipts.get(run.deliveryId)) || null }));
  }

  /** The receipt of the run's delivery, or null (nothing delivered, or no receipts here). */
  async deliveryOf(run: WorkflowRun): Promise<DeliveryReceipt | null> {
    return (await this.#receipts([run])).get(run.deliveryId ?? '') ?? null;
  }

  async #receipts(runs: WorkflowRun[]): Promise<Map<string, DeliveryReceipt>> {
    const ids = runs.flatMap((run) => (run.deliveryId ? [run.deliveryId] : []));
    if (!this.#deps.receipts || ids.length === 0) return new Map();
    return this.#deps.receipts(ids);
  }

  /**
   * Runs a workflow now (`steward schedules run NAME`): a scheduled skill or any `workflows.*`
   * page, by name (`daily_digest`) or full name. `userId` limits it to that user's workflows.
   * Resolves with the recorded run, or a message saying why it cannot run.
   */
  async runNow(name: string, userId?: string): Promise<{ run: WorkflowRun } | { problem: string }> {
    const snapshot = this.#deps.skills();
    const declared = await this.declared(snapshot);
    const matches = (skill: SkillDefinition) => skill.name === name || skill.action === name;
    const scheduled = declared.filter(
      (schedule) => matches(schedule.skill) && (userId === undefined || schedule.userId === userId),
    );
    let target: { skill: SkillDefinition; userId: string; timezone: string } | undefined = scheduled[0];
    if (scheduled.length > 1)
      return { problem: `"${name}" names ${scheduled.length} schedules: use the full skill name or --user.` };
    if (!target) {
      const skill = snapshot.skills.get(name.includes('.') ? name : `workflows.${name}`);
      const owner = skill?.owner ?? userId ?? DEFAULT_OWNER;
      if (
        !skill ||
        (skill.domain !== 'workflows' && !skill.schedule) ||
        (userId !== undefined && owner !== userId)
      ) {
        return {
          problem: `No workflow "${name}"${userId ? ` for user ${userId}` : ''}: see steward schedules, or skills list for workflows.*`,
        };
      }
      const user = await ensureUser(this.#deps.database, owner);
      target = { skill, userId: owner, timezone: skill.timezone ?? user.timezone };
    }
    await ensureUser(this.#deps.database, target.userId);
    const run = await runWorkflow(this.#runnerDeps(), {
      userId: target.userId,
      skill: target.skill.name,
      scheduledFor: this.#now(),
      trigger: 'manual',
      timezone: target.timezone,
    });
    if (!run) return { problem: `${target.skill.name} is already running.` };
    return { run };
  }
}
