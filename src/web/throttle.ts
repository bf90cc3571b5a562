/** Failed logins per address: `max` failures within `windowMs` lock the address out until the oldest ages out. */
export class LoginThrottle {
  #failures = new Map<string, number[]>();
  readonly max: number;
  readonly windowMs: number;
  constructor(max = 5, windowMs = 5 * 60 * 1000) {
    this.max = max;
    this.windowMs = windowMs;
  }

  #recent(address: string, now: number): number[] {
    const kept = (this.#failures.get(address) ?? []).filter((at) => now - at < this.windowMs);
    if (kept.length) this.#failures.set(address, kept);
    else this.#failures.delete(address);
    return kept;
  }

  /** Seconds until `address` may try again, or 0 when it may now. */
  retryAfter(address: string, now = Date.now()): number {
    const recent = this.#recent(address, now);
    if (recent.length < this.max) return 0;
    const oldest = recent[recent.length - this.max]!;
    return Math.max(1, Math.ceil((oldest + this.windowMs - now) / 1000));
  }

  fail(address: string, now = Date.now()): void {
    const recent = this.#recent(address, now);
    recent.push(now);
    this.#failures.set(address, recent);
    // Bounded: an address flood cannot grow the map without limit.
    if (this.#failures.size > 10_000) {
      const first = this.#failures.keys().next().value;
      if (first !== undefined) this.#failures.delete(first);
    }
  }
}
