/**
 * Counts webhook verification failures per client address: 20 within a minute block the
 * address for 5 minutes. Blocking refuses only its requests that fail verification (429
 * instead of 401, nothing written for them); verified requests are never refused by it.
 */
export class FailureLimiter {
  readonly #maxFailures: number;
  readonly #windowMs: number;
  readonly #blockMs: number;
  readonly #now: () => number;
  readonly #entries = new Map<string, { count: number; windowStart: number; blockedUntil: number }>();

  constructor(
    options: { maxFailures?: number; windowMs?: number; blockMs?: number; now?: () => number } = {},
  ) {
    this.#maxFailures = options.maxFailures ?? 20;
    this.#windowMs = options.windowMs ?? 60_000;
    this.#blockMs = options.blockMs ?? 5 * 60_000;
    this.#now = options.now ?? Date.now;
  }

  /** Milliseconds the address must still wait, or 0. */
  blockedFor(address: string): number {
    const entry = this.#entries.get(address);
    if (!entry) return 0;
    return Math.max(0, entry.blockedUntil - this.#now());
  }

  /** Records one failure; returns true when this failure blocked the address. */
  fail(address: string): boolean {
    const now = this.#now();
    if (this.#entries.size > 10_000) this.#prune(now);
    let entry = this.#entries.get(address);
    if (!entry || now - entry.windowStart > this.#windowMs) {
      entry = { count: 0, windowStart: now, blockedUntil: entry?.blockedUntil ?? 0 };
      this.#entries.set(address, entry);
    }
    entry.count++;
    if (entry.count >= this.#maxFailures && entry.blockedUntil <= now) {
      entry.blockedUntil = now + this.#blockMs;
      entry.count = 0;
      entry.windowStart = now;
      return true;
    }
    return false;
  }

  #prune(now: number): void {
    for (const [address, entry] of this.#entries) {
      if (entry.blockedUntil <= now && now - entry.windowStart > this.#windowMs)
        this.#entries.delete(address);
    }
  }
}
