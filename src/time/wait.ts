/**
 * Resolves after `ms`, or as soon as `signal` aborts (never rejects): the pause of a loop that
 * retries until it is stopped, which checks the signal itself after waking.
 */
export function waitUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
