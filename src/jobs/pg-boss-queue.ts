import type { PgBoss } from 'pg-boss';
import type { Database } from '../db/index.ts';
import { errorMessage } from '../errors.ts';
import type { Logger } from '../logging/index.ts';
import type {
  EnqueueOptions,
  JobFailure,
  JobHandler,
  JobQueue,
  QueueDepth,
  QueueOptions,
} from './job-queue.ts';

type Registered = { handler: JobHandler<object>; options: QueueOptions };

/**
 * JobQueue on pg-boss 12: on a PostgreSQL server through its own pool, on PGlite through
 * the `fromPglite` adapter over Steward's single embedded connection.
 */
export class PgBossQueue implements JobQueue {
  readonly #database: Database;
  readonly #schedule: boolean;
  readonly #logger: Logger;
  readonly #queues = new Map<string, Registered>();
  /** This process's worker per queue, woken on enqueue so a local job starts without waiting a poll. */
  readonly #workers = new Map<string, string>();
  readonly #stopping = new AbortController();
  readonly #onFailure: ((failure: JobFailure) => void) | null;
  #started = false;
  #booted: Promise<PgBoss> | null = null;
  /** Schedules given before pg-boss booted, stored when it does. */
  readonly #schedules = new Map<string, { cron: string; data: object; timezone: string }>();
  /** Set once pg-boss is loaded, even when its start then failed (stop still closes it). */
  #boss: PgBoss | null = null;

  /**
   * `onFailure` hears of every failed run (metrics; an alert when it was the last retry). Must not throw.
   * `cron: false` leaves sending the jobs of cron schedules when they fall due to another process
   * (a one-shot command leaves it to the server): its start then skips pg-boss's timekeeper, which
   * reads the clock skew, starts a worker of its own and checks every schedule (~0.1 s CPU on PGlite).
   * Schedules are still stored.
   */
  constructor(
    database: Database,
    logger: Logger,
    options: { onFailure?: (failure: JobFailure) => void; cron?: boolean } = {},
  ) {
    this.#database = database;
    this.#logger = logger;
    this.#onFailure = options.onFailure ?? null;
    this.#schedule = options.cron ?? true;
  }

  /**
   * pg-boss, loaded, its schema, the registered queues and the schedules created on first use
   * (idempotent): a one-shot command that queues nothing never loads it (~0.2 s CPU with
   * node-postgres, which it imports). The server starts it, which stores them all.
   */
  #boot(): Promise<PgBoss> {
    this.#booted ??= this.#create().then(async (boss) => {
      await boss.start();
      // Queues registered before pg-boss was loaded (a later register creates its own).
      for (const [name, { options }] of [...this.#queues]) await this.#createQueue(boss, name, options);
      for (const [name, { cron, data, timezone }] of this.#schedules)
        await boss.schedule(name, cron, data, { tz: timezone });
      this.#schedules.clear();
      return boss;
    });
    return this.#booted;
  }

  async #create(): Promise<PgBoss> {
    const { fromPglite, PgBoss } = await import('pg-boss');
    const connection = this.#database.connection;
    const schedule = this.#schedule;
    const boss =
      connection.kind === 'pglite'
        ? new PgBoss({ db: fromPglite(connection.session), backend: 'pglite', schema: 'pgboss', schedule })
        : new PgBoss({
            connectionString: connection.url,
            max: 4,
            schema: 'pgboss',
            application_name: 'steward-jobs',
            schedule,
          });
    boss.on('error', (error) => this.#logger.error({ err: error }, 'job queue error'));
    this.#boss = boss;
    return boss;
  }

  /** Records the queue; pg-boss creates it when it boots (now, when it already has). */
  async register<Data extends object>(
    name: string,
    handler: JobHandler<Data>,
    options: QueueOptions = {},
  ): Promise<void> {
    this.#queues.set(name, { handler: handler as JobHandler<object>, options });
    if (!this.#booted) return;
    const boss = await this.#boot();
    await this.#createQueue(boss, name, options);
    if (this.#started) await this.#work(name);
  }

  async #createQueue(boss: PgBoss, name: string, options: QueueOptions): Promise<void> {
    const existing = await boss.getQueue(name);
    const queueOptions = {
      retryLimit: options.retryLimit ?? 3,
      retryDelay: options.retryDelaySeconds ?? 2,
      retryBackoff: options.retryBackoff ?? true,
      expireInSeconds: options.expireInSeconds ?? 120,
    };
    if (!existing) {
      await boss.createQueue(name, {
        ...queueOptions,
        policy: options.singletonPerKey ? 'stately' : 'standard',
      });
    } else if (
      // A restart registers the same queues again: write only what changed.
      existing.retryLimit !== queueOptions.retryLimit ||
      existing.retryDelay !== queueOptions.retryDelay ||
      existing.retryBackoff !== queueOptions.retryBackoff ||
      existing.expireInSeconds !== queueOptions.expireInSeconds
    ) {
      await boss.updateQueue(name, queueOptions);
    }
  }

  async enqueue<Data extends object>(
    name: string,
    data: Data,
    options: EnqueueOptions = {},
  ): Promise<string | null> {
    const boss = await this.#boot();
    const id = await boss.send(name, data, {
      ...(options.singletonKey ? { singletonKey: options.singletonKey } : {}),
      ...(options.startAfterSeconds ? { startAfter: options.startAfterSeconds } : {}),
    });
    const worker = this.#workers.get(name);
    if (worker && !options.startAfterSeconds) boss.notifyWorker(worker);
    return id;
  }

  /** Stores the schedule when pg-boss boots (now, when it already has). */
  async schedule(name: string, cron: string, data: object, timezone: string): Promise<void> {
    if (!this.#booted) {
      this.#schedules.set(name, { cron, data, timezone });
      return;
    }
    const boss = await this.#boot();
    await boss.schedule(name, cron, data, { tz: timezone });
  }

  async start(): Promise<void> {
    await this.#boot();
    this.#started = true;
    for (const name of this.#queues.keys()) await this.#work(name);
  }

  async #work(name: string): Promise<void> {
    const registered = this.#queues.get(name)!;
    const boss = await this.#boot();
    const worker = await boss.work<object>(
      name,
      { pollingIntervalSeconds: 0.5, batchSize: 1, localConcurrency: registered.options.concurrency ?? 1 },
      async (jobs) => {
        for (const job of jobs) {
          try {
            await registered.handler(job.data, { jobId: job.id, signal: this.#stopping.signal });
          } catch (error) {
            this.#failed(name, job.id, error, job.retryCount >= (registered.options.retryLimit ?? 3));
            throw error;
          }
        }
      },
    );
    this.#workers.set(name, worker);
  }

  #failed(queue: string, jobId: string, error: unknown, final: boolean): void {
    try {
      this.#onFailure?.({ queue, jobId, error: errorMessage(error), final });
    } catch (failure) {
      this.#logger.warn({ err: errorMessage(failure) }, 'job failure listener failed');
    }
  }

  async depths(): Promise<QueueDepth[]> {
    if (this.#queues.size === 0) return [];
    const boss = await this.#boot();
    const queues = await boss.getQueues([...this.#queues.keys()]);
    return queues.map((queue) => ({
      queue: queue.name,
      ready: queue.readyCount,
      active: queue.activeCount,
      deferred: queue.deferredCount,
    }));
  }

  async drain(names: string[] = [...this.#queues.keys()]): Promise<number> {
    if (!this.#booted && !(await this.#anyQueued(names))) return 0;
    const boss = await this.#boot();
    let ran = 0;
    for (const name of names) {
      const registered = this.#queues.get(name);
      if (!registered) continue;
      for (;;) {
        const jobs = await boss.fetch<object>(name, { batchSize: 1, ignoreStartAfter: true });
        if (jobs.length === 0) break;
        for (const job of jobs) {
          try {
            await registered.handler(job.data, { jobId: job.id, signal: this.#stopping.signal });
            await boss.complete(name, job.id);
          } catch (error) {
            this.#failed(name, job.id, error, job.retryCount >= (registered.options.retryLimit ?? 3));
            this.#logger.warn({ err: errorMessage(error), job: name }, 'job failed; it will be retried');
            await boss.fail(name, job.id, { message: errorMessage(error) });
            return ran; // a retry waits for its backoff: leave it to the next process that starts
          }
          ran++;
        }
      }
    }
    return ran;
  }

  /**
   * Whether any of `names` holds a job waiting to run, read from pg-boss's table without loading
   * pg-boss (true when that read fails: pg-boss then answers).
   */
  async #anyQueued(names: string[]): Promise<boolean> {
    if (names.length === 0) return false;
    try {
      const rows = await this.#database.query(
        "SELECT 1 FROM pgboss.job WHERE name = ANY($1::text[]) AND state < 'active' LIMIT 1",
        [names],
      );
      return rows.length > 0;
    } catch {
      return true;
    }
  }

  async stop(): Promise<void> {
    this.#stopping.abort();
    if (!this.#booted) return;
    await this.#booted.catch(() => undefined);
    await this.#boss?.stop({ graceful: true, timeout: 5_000 });
  }
}
