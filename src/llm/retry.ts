/** Waits `ms`; rejects early when `signal` fires. Injectable so tests never really wait. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export const BACKOFF_BASE_MS = 500;
export const BACKOFF_CAP_MS = 20_000;
/** We honour Retry-After, but never park a call for more than a minute. */
export const RETRY_AFTER_CAP_MS = 60_000;

/**
 * Delay before retry number `attempt + 1`: exponential backoff with full jitter
 * (uniform in [0, min(cap, base·2^attempt)]), but at least the provider's Retry-After.
 */
export function backoffDelayMs(
  attempt: number,
  retryAfterSeconds: number | null,
  random: () => number,
): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** attempt);
  const jittered = Math.floor(random() * ceiling);
  if (retryAfterSeconds === null) return jittered;
  return Math.max(jittered, Math.min(Math.ceil(retryAfterSeconds * 1000), RETRY_AFTER_CAP_MS));
}

export const abortableSleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
