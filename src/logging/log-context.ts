import { AsyncLocalStorage } from 'node:async_hooks';

/** Ids every log line written inside a turn carries, whichever module writes it. */
export type LogFields = {
  turnId?: string;
  conversationId?: string;
  agentId?: string;
  executionId?: string;
  skill?: string;
};

const storage = new AsyncLocalStorage<LogFields>();

/** Runs `fn` with `fields` added to the ids of every log line written inside it. */
export function withLogContext<T>(fields: LogFields, fn: () => T): T {
  return storage.run({ ...storage.getStore(), ...defined(fields) }, fn);
}

/**
 * Adds `fields` for the rest of the current async function and what it goes on to await.
 * For a hook called inside a function one does not own (the turn observer inside the turn):
 * callers up the stack keep their own context, because each await restores the context it
 * was taken in.
 */
export function enterLogContext(fields: LogFields): void {
  storage.enterWith({ ...storage.getStore(), ...defined(fields) });
}

/** The ids in force here, for the logger's mixin. */
export function currentLogFields(): LogFields {
  return storage.getStore() ?? {};
}

function defined(fields: LogFields): LogFields {
  const out: LogFields = {};
  for (const [key, value] of Object.entries(fields) as Array<[keyof LogFields, string | undefined]>) {
    if (value) out[key] = value;
  }
  return out;
}
