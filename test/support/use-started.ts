import { afterAll, beforeAll } from 'vitest';

/**
 * Something the enclosing `describe` block (or file) starts before its tests and stops after
 * them. What this returns stands for the started thing (every read, write and call goes to
 * it), so it can be handed out while the tests are declared and used in hooks and tests.
 */
export function useStarted<T extends object>(
  what: string,
  start: () => Promise<T>,
  stop: (started: T) => Promise<void>,
  timeouts: { startMs?: number; stopMs?: number } = {},
): T {
  let started: T | null = null;
  beforeAll(async () => {
    started = await start();
  }, timeouts.startMs);
  afterAll(async () => {
    if (started) await stop(started);
  }, timeouts.stopMs);
  const current = (): T => {
    if (!started) throw new Error(`${what} is used before its beforeAll started it`);
    return started;
  };
  return new Proxy({} as T, {
    get: (_, key) => {
      const target = current();
      const value = Reflect.get(target, key);
      return typeof value === 'function' ? value.bind(target) : value;
    },
    set: (_, key, value) => Reflect.set(current(), key, value),
  });
}
