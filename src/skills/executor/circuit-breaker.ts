import type { Queryable } from '../../db/index.ts';

export type BreakerState = 'closed' | 'open' | 'half_open';

/** A breaker moved to `state` (exactly once per move, even with several processes on one database). */
export type BreakerChange = { skill: string; state: BreakerState; lastError: string | null };

export type BreakerOptions = {
  failureThreshold: number;
  cooldownMs: number;
  /** Told of every state change (alerts, metrics). Must not throw. */
  onStateChange?: (change: BreakerChange) => void;
};
export const DEFAULT_BREAKER: BreakerOptions = { failureThreshold: 5, cooldownMs: 60_000 };

type BreakerRow = {
  state: BreakerState;
  consecutive_failures: number;
  opened_at: Date | null;
};

/**
 * `clean`: no failure is on record, so a success has nothing to reset (recordSuccess can be
 * skipped; a failure recorded meanwhile by another call then stays counted, as it would had it
 * come after this success).
 */
export type BreakerDecision =
  | { allowed: true; trial: boolean; clean: boolean }
  | { allowed: false; retryInMs: number };

/**
 * Per-skill circuit breaker, persisted in skill_circuit_breakers so a restart keeps it:
 * `failureThreshold` consecutive failures open it for `cooldownMs`; then one trial call is
 * let through (half-open); its success closes the breaker, its failure opens it again.
 */
export class CircuitBreakers {
  readonly #db: Queryable;
  readonly #options: BreakerOptions;
  readonly #now: () => Date;

  constructor(db: Queryable, options: Partial<BreakerOptions> = {}, now: () => Date = () => new Date()) {
    this.#db = db;
    this.#options = { ...DEFAULT_BREAKER, ...options };
    this.#now = now;
  }

  async check(skill: string): Promise<BreakerDecision> {
    const rows = await this.#db.query<BreakerRow>(
      'SELECT state, consecutive_failures, opened_at FROM skill_circuit_breakers WHERE skill = $1',
      [skill],
    );
    const row = rows[0];
    if (!row) return { allowed: true, trial: false, clean: true };
    if (row.state === 'closed') {
      return { allowed: true, trial: false, clean: Number(row.consecutive_failures) === 0 };
    }
    const openedAt = row.opened_at ? new Date(row.opened_at).getTime() : 0;
    const elapsed = this.#now().getTime() - openedAt;
    if (row.state === 'open' && elapsed >= this.#options.cooldownMs) {
      // Exactly one caller wins the move to half-open and makes the trial call.
      const claimed = await this.#db.query(
        "UPDATE skill_circuit_breakers SET state = 'half_open', updated_at = $2 WHERE skill = $1 AND state = 'open' RETURNING skill",
        [skill, this.#now()],
      );
      if (claimed.length === 1) {
        this.#changed({ skill, state: 'half_open', lastError: null });
        return { allowed: true, trial: true, clean: false };
      }
    }
    return { allowed: false, retryInMs: Math.max(0, this.#options.cooldownMs - elapsed) };
  }

  async recordSuccess(skill: string): Promise<void> {
    // The self-join reads the row as it was before this update: was it closed already?
    const rows = await this.#db.query<{ previous: BreakerState }>(
      `UPDATE skill_circuit_breakers AS breaker
       SET state = 'closed', consecutive_failures = 0, opened_at = NULL, updated_at = $2
       FROM skill_circuit_breakers AS before
       WHERE breaker.skill = $1 AND before.skill = breaker.skill
       RETURNING before.state AS previous`,
      [skill, this.#now()],
    );
    if (rows[0] && rows[0].previous !== 'closed') this.#changed({ skill, state: 'closed', lastError: null });
  }

  /** Every breaker that has seen a failure, with its state (for the metrics gauge). */
  async states(): Promise<Array<{ skill: string; state: BreakerState }>> {
    return this.#db.query<{ skill: string; state: BreakerState }>(
      'SELECT skill, state FROM skill_circuit_breakers ORDER BY skill',
    );
  }

  #changed(change: BreakerChange): void {
    try {
      this.#options.onStateChange?.(change);
    } catch {
      // An observer's failure must not change what the breaker decides.
    }
  }

  async recordFailure(skill: string, error: string): Promise<void> {
    await this.#db.query(
      `INSERT INTO skill_circuit_breakers (skill, state, consecutive_failures, last_error, updated_at)
       VALUES ($1, 'closed', 1, $2, $3)
       ON CONFLICT (skill) DO UPDATE SET
         consecutive_failures = skill_circuit_breakers.consecutive_failures + 1,
         last_error = EXCLUDED.last_error,
         updated_at = EXCLUDED.updated_at`,
      [skill, error.slice(0, 500), this.#now()],
    );
    const opened = await this.#db.query(
      `UPDATE skill_circuit_breakers SET state = 'open', opened_at = $3
       WHERE skill = $1 AND (state = 'half_open' OR (state = 'closed' AND consecutive_failures >= $2))
       RETURNING skill`,
      [skill, this.#options.failureThreshold, this.#now()],
    );
    if (opened.length === 1) this.#changed({ skill, state: 'open', lastError: error.slice(0, 500) });
  }
}
