/**
 * Failures per key (a client address): `maxFailures` within `windowMs` throttle the key until
 * the oldest of them ages out. It only counts: callers check credentials first and consult
 * the throttle for requests that failed, so a valid credential is never refused because of
 * someone else's failures (behind a reverse proxy every client shares one address).
 */
export class FailureThrottle {
  readonly maxFailures: number;
  readonly windowMs: number;
  readonly #now: () => number;
  readonly #failures = new Map<string, number[]>();

  constructor(options: { maxFailures: number; windowMs: number; now?: () => number }) {
    this.maxFailures = options.maxFailures;
    this.windowMs = options.windowMs;
    this.#now = options.now ?? Date.now;
  }

  #recent(key: string, now: number): number[] {
    const kept = (this.#failures.get(key) ?? []).filter((at) => now - at < this.windowMs);
    if (kept.length) this.#failures.set(key, kept);
    else this.#failures.delete(key);
    return kept;
  }

  /** Seconds until `key` is no longer throttled, or 0 when it is not. */
  retryAfter(key: string, now = this.#now()): number {
    const recent = this.#recent(key, now);
    if (recent.length < this.maxFailures) return 0;
    const oldest = recent[recent.length - this.maxFailures]!;
    return Math.max(1, Math.ceil((oldest + this.windowMs - now) / 1000));
  }

  /**
   * Records one failure of `key`; returns true when it is the one that throttles the key.
   * Failures of a throttled key are not stored (they are refused anyway), so memory stays
   * bounded by `maxFailures` per key and 10,000 keys.
   */
  fail(key: string, now = this.#now()): boolean {
    const recent = this.#recent(key, now);
    if (recent.length >= this.maxFailures) return false;
    recent.push(now);
    this.#failures.set(key, recent);
    if (this.#failures.size > 10_000) {
      const first = this.#failures.keys().next().value;
      if (first !== undefined) this.#failures.delete(first);
    }
    return recent.length === this.maxFailures;
  }
}
