/** What a job handler learns about its run. */
export type JobContext = { jobId: string; signal: AbortSignal };

export type JobHandler<Data> = (data: Data, context: JobContext) => Promise<void>;

export type QueueOptions = {
  /** Retries after the first failure (default 3). */
  retryLimit?: number;
  /** Seconds before the first retry; doubles with jitter when `retryBackoff` (default 2 s, backoff on). */
  retryDelaySeconds?: number;
  retryBackoff?: boolean;
  /** A running job not finished within this many seconds is retried (a crashed worker). Default 120. */
  expireInSeconds?: number;
  /** Jobs with the same singleton key: at most one queued and one running. */
  singletonPerKey?: boolean;
  /** Jobs of this queue run at once in one process (default 1). */
  concurrency?: number;
};

export type EnqueueOptions = { singletonKey?: string; startAfterSeconds?: number };

/** A queue's backlog: jobs ready to run now, running, and waiting for their start time. */
export type QueueDepth = { queue: string; ready: number; active: number; deferred: number };

/** A job's handler failed. `final`: that was its last retry; the job will not run again. */
export type JobFailure = { queue: string; jobId: string; error: string; final: boolean };

/**
 * Background jobs: retries with backoff, singleton keys, delayed jobs and cron schedules in
 * a time zone. Jobs live in the database, so a job enqueued before a crash runs after restart.
 */
export interface JobQueue {
  /** Declares a queue and its handler. Workers poll only after `start()`. */
  register<Data extends object>(
    name: string,
    handler: JobHandler<Data>,
    options?: QueueOptions,
  ): Promise<void>;
  enqueue<Data extends object>(name: string, data: Data, options?: EnqueueOptions): Promise<string | null>;
  /** Runs `name` on a cron expression evaluated in `timezone` (IANA). */
  schedule(name: string, cron: string, data: object, timezone: string): Promise<void>;
  /** Starts polling workers for every registered queue (long-running processes). */
  start(): Promise<void>;
  /**
   * Runs, in this process, every job of the given queues that is waiting (delays ignored),
   * until none is left. One-shot commands call it before exiting. Returns how many ran.
   */
  drain(names?: string[]): Promise<number>;
  /** The backlog of every registered queue (metrics). */
  depths(): Promise<QueueDepth[]>;
  stop(): Promise<void>;
}
