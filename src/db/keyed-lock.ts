import type { Database } from './client.ts';

/** Runs tasks one at a time per key, in the order they were queued; different keys run concurrently. */
export class KeyedQueue {
  readonly #tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.catch(() => undefined);
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }

  /** Settles when the work queued on `key` so far has ended; undefined when none is. */
  pending(key: string): Promise<unknown> | undefined {
    return this.#tails.get(key);
  }

  /** How many keys have work queued or running. */
  get size(): number {
    return this.#tails.size;
  }
}

/**
 * The one lock discipline: work on a key (`conversation:<id>`, `channel-chat:<channel>:<chat>`)
 * runs one at a time, in call order, in this process (a queue, so waiting callers hold no
 * connection) and across every process on the database (a Postgres advisory lock on the key).
 */
export class KeyedLock {
  readonly #database: Database;
  readonly #queue = new KeyedQueue();

  constructor(database: Database) {
    this.#database = database;
  }

  /** Runs `task` holding the key, after every task queued on it before. */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    return this.#queue.run(key, () => this.#database.withAdvisoryLock(key, task));
  }

  /** Settles when the work this process queued on `key` so far has ended; undefined when none is. */
  pending(key: string): Promise<unknown> | undefined {
    return this.#queue.pending(key);
  }

  /** Like `run`, but when another process holds the key the task is skipped (null). */
  tryRun<T>(key: string, task: () => Promise<T>): Promise<{ value: T } | null> {
    return this.#queue.run(key, () => this.#database.tryAdvisoryLock(key, task));
  }
}
