import type { SpendConfig } from '../config/index.ts';
import type { Queryable } from '../db/index.ts';
import { spentSince, utcDate, utcDayStart } from '../llm/index.ts';
import type { Logger } from '../logging/index.ts';

/** What the guard raises; `Alerts.spendCap` in production. */
export type SpendAlert = (cap: {
  kind: 'soft' | 'hard';
  userId: string;
  spentUsd: number;
  capUsd: number;
  date: string;
}) => void;

export type SpendGuardOptions = {
  database: Queryable;
  spend: () => SpendConfig;
  alert: SpendAlert;
  logger: Logger;
  now?: () => Date;
};

const dollars = (amount: number) => `$${amount < 1 ? amount.toFixed(4) : amount.toFixed(2)}`;

/**
 * Per-user daily spend caps (UTC days, from the recorded cost of every LLM call). Over the soft
 * cap the owner is alerted once per user and day; at the hard cap new turns are refused with
 * a message saying why and until when, and the owner is alerted once per user and day.
 */
export class SpendGuard {
  readonly #options: SpendGuardOptions;
  readonly #now: () => Date;
  readonly #alerted = new Set<string>();

  constructor(options: SpendGuardOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => new Date());
  }

  /** The engine's `beforeTurn`: a refusal message at the hard cap, else null. Never throws. */
  async beforeTurn(turn: { userId: string }): Promise<string | null> {
    const { daily_hard_usd: hard, daily_soft_usd: soft } = this.#options.spend();
    if (hard === undefined && soft === undefined) return null;
    const spent = await this.#spentToday(turn.userId);
    if (spent === null) return null;
    this.#checkSoft(turn.userId, spent);
    if (hard === undefined || spent < hard) return null;
    this.#alertOnce('hard', turn.userId, spent, hard);
    return (
      `the daily spending limit of ${dollars(hard)} is reached (${dollars(spent)} spent today, UTC), ` +
      'so I am not calling the model again today. The owner has been told. The limit resets at ' +
      'midnight UTC, or the owner can raise spend.daily_hard_usd (STEWARD_SPEND_HARD_USD).'
    );
  }

  /** After a turn: alerts when this turn took the user over the soft cap. Never throws. */
  async afterTurn(turn: { userId: string }): Promise<void> {
    if (this.#options.spend().daily_soft_usd === undefined) return;
    const spent = await this.#spentToday(turn.userId);
    if (spent !== null) this.#checkSoft(turn.userId, spent);
  }

  #checkSoft(userId: string, spent: number): void {
    const soft = this.#options.spend().daily_soft_usd;
    if (soft !== undefined && spent >= soft) this.#alertOnce('soft', userId, spent, soft);
  }

  #alertOnce(kind: 'soft' | 'hard', userId: string, spent: number, cap: number): void {
    const date = utcDate(this.#now());
    const key = `${kind}:${userId}:${date}`;
    if (this.#alerted.has(key)) return;
    // Yesterday's keys are of no further use.
    for (const old of this.#alerted) if (!old.endsWith(`:${date}`)) this.#alerted.delete(old);
    this.#alerted.add(key);
    this.#options.alert({ kind, userId, spentUsd: spent, capUsd: cap, date });
  }

  async #spentToday(userId: string): Promise<number | null> {
    try {
      return await spentSince(this.#options.database, userId, utcDayStart(this.#now()));
    } catch (error) {
      // A spend check that cannot read the database must not block the user's turn.
      this.#options.logger.warn({ err: error, userId }, 'could not read today’s spend');
      return null;
    }
  }
}
