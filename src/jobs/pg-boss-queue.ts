import { fromPglite, PgBoss } from 'pg-boss';
import type { Database } from '../db/index.ts';
import { errorMessage } from '../errors.ts';
import type { Logger } from '../logging/logger.ts';
import type { EnqueueOptions, JobHandler, JobQueue, QueueOptions } from './job-queue.ts';

type Registered = { handler: JobHandler<object>; options: QueueOptions };

/**
 * JobQueue on pg-boss 12: on a PostgreSQL server through its own pool, on PGlite through
 * the `fromPglite` adapter over Steward's single embedded connection.
 */
export class PgBossQueue implements JobQueue {
  readonly #boss: PgBoss;
  readonly #logger: Logger;
  readonly #queues = new Map<string, Registered>();
  readonly #stopping = new AbortController();
  #started = false;
  #booted: Promise<void> | null = null;

  constructor(database: Database, logger: Logger) {
    this.#logger = logger;
    const connection = database.connection;
    this.#boss =
      connection.kind === 'pglite'
        ? new PgBoss({ db: fromPglite(connection.client), backend: 'pglite', schema: 'pgboss' })
        : new PgBoss({
            connectionString: connection.url,
            max: 4,
            schema: 'pgboss',
            application_name: 'steward-jobs',
          });
    this.#boss.on('error', (error) => this.#logger.error({ err: error }, 'job queue error'));
  }

  /** Creates pg-boss's schema on first use (idempotent). */
  #boot(): Promise<void> {
    this.#booted ??= this.#boss.start().then(() => undefined);
    return this.#booted;
  }

  async register<Data extends object>(
    name: string,
    handler: JobHandler<Data>,
    options: QueueOptions = {},
  ): Promise<void> {
    await this.#boot();
    const existing = await this.#boss.getQueue(name);
    const queueOptions = {
      retryLimit: options.retryLimit ?? 3,
      retryDelay: options.retryDelaySeconds ?? 2,
      retryBackoff: options.retryBackoff ?? true,
      expireInSeconds: options.expireInSeconds ?? 120,
    };
    if (!existing) {
      await this.#boss.createQueue(name, {
        ...queueOptions,
        policy: options.singletonPerKey ? 'stately' : 'standard',
      });
    } else {
      await this.#boss.updateQueue(name, queueOptions);
    }
    this.#queues.set(name, { handler: handler as JobHandler<object>, options });
    if (this.#started) await this.#work(name);
  }

  async enqueue<Data extends object>(
    name: string,
    data: Data,
    options: EnqueueOptions = {},
  ): Promise<string | null> {
    await this.#boot();
    return this.#boss.send(name, data, {
      ...(options.singletonKey ? { singletonKey: options.singletonKey } : {}),
      ...(options.startAfterSeconds ? { startAfter: options.startAfterSeconds } : {}),
    });
  }

  async schedule(name: string, cron: string, data: object, timezone: string): Promise<void> {
    await this.#boot();
    await this.#boss.schedule(name, cron, data, { tz: timezone });
  }

  async start(): Promise<void> {
    await this.#boot();
    this.#started = true;
    for (const name of this.#queues.keys()) await this.#work(name);
  }

  async #work(name: string): Promise<void> {
    const registered = this.#queues.get(name)!;
    await this.#boss.work<object>(name, { pollingIntervalSeconds: 0.5, batchSize: 1 }, async (jobs) => {
      for (const job of jobs) {
        await registered.handler(job.data, { jobId: job.id, signal: this.#stopping.signal });
      }
    });
  }

  async drain(names: string[] = [...this.#queues.keys()]): Promise<number> {
    await this.#boot();
    let ran = 0;
    for (const name of names) {
      const registered = this.#queues.get(name);
      if (!registered) continue;
      for (;;) {
        const jobs = await this.#boss.fetch<object>(name, { batchSize: 1, ignoreStartAfter: true });
        if (jobs.length === 0) break;
        for (const job of jobs) {
          try {
            await registered.handler(job.data, { jobId: job.id, signal: this.#stopping.signal });
            await this.#boss.complete(name, job.id);
          } catch (error) {
            this.#logger.warn({ err: errorMessage(error), job: name }, 'job failed; it will be retried');
            await this.#boss.fail(name, job.id, { message: errorMessage(error) });
            return ran; // a retry waits for its backoff: leave it to the next process that starts
          }
          ran++;
        }
      }
    }
    return ran;
  }

  async stop(): Promise<void> {
    this.#stopping.abort();
    if (!this.#booted) return;
    await this.#booted.catch(() => undefined);
    await this.#boss.stop({ graceful: true, timeout: 5_000 });
  }
}
