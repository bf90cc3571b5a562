import type { LlmCallRecord, LlmErrorClass } from '../llm/index.ts';
import type { AlertRouter } from './alert-router.ts';
import type { Alert } from './alert-types.ts';

/** Failure classes that say the endpoint itself is failing (not the request, not the caller). */
const ENDPOINT_FAILURES: ReadonlySet<LlmErrorClass> = new Set([
  'provider_down',
  'timeout',
  'bad_response',
  'rate_limit',
  'auth',
  'credits',
]);

/** Consecutive endpoint failures before the "LLM endpoint failing" alert. */
export const LLM_FAILURES_BEFORE_ALERT = 3;

const SHORT = 200;
const short = (text: string) => (text.length > SHORT ? `${text.slice(0, SHORT - 1)}…` : text);

export type AlertsOptions = {
  router: AlertRouter;
  /** The LLM endpoint, named in alerts and keys (its host, never its key). */
  llmEndpoint: () => string | null;
  /** Verification failures per channel that raise an alert, within `webhookWindowMs`. */
  webhookThreshold: () => number;
  webhookWindowMs: () => number;
  now?: () => number;
};

/**
 * The alerts Steward raises, one method per cause, each with its dedup key. Other modules
 * call these (channels: `webhookVerificationFailed`, `deliveryRerouted`; workflows: `workflowFailed`); none of
 * them blocks or throws.
 */
export class Alerts {
  readonly #options: AlertsOptions;
  readonly #now: () => number;
  readonly #llmStreaks = new Map<string, number>();
  readonly #webhookFailures = new Map<string, number[]>();

  constructor(options: AlertsOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  raise(alert: Alert): void {
    this.#options.router.raise(alert);
  }

  /** Every LLM attempt (the client's usage recorder): alerts from the third consecutive endpoint failure. */
  llmCall(record: LlmCallRecord): void {
    const endpoint = this.#options.llmEndpoint() ?? 'the LLM endpoint';
    if (!record.errorClass) {
      this.#llmStreaks.delete(endpoint);
      return;
    }
    if (!ENDPOINT_FAILURES.has(record.errorClass)) return;
    const streak = (this.#llmStreaks.get(endpoint) ?? 0) + 1;
    this.#llmStreaks.set(endpoint, streak);
    if (streak < LLM_FAILURES_BEFORE_ALERT) return;
    this.raise({
      severity: 'error',
      key: `llm-down:${endpoint}`,
      title: `LLM endpoint ${endpoint} is failing`,
      detail: short(
        `${streak} consecutive failed calls; last: ${record.model} (${record.role}) ${record.errorClass}${record.error ? `: ${record.error}` : ''}`,
      ),
    });
  }

  /** The client moved a role to a fallback model after its model failed. */
  llmFailover(event: { role: string; from: string; to: string; errorClass: string }): void {
    this.raise({
      severity: 'warning',
      key: `llm-failover:${event.role}:${event.from}`,
      title: `LLM failover: ${event.role} moved from ${event.from} to ${event.to}`,
      detail: `${event.from} failed with ${event.errorClass}`,
    });
  }

  /** Raised once per opening: the breaker calls this only on its move to open. */
  breakerOpened(breaker: string, lastError: string | null): void {
    // A per-user breaker is keyed `skill#user`: only that user's calls are paused.
    const [skill, user] = breaker.split('#');
    const whose = user ? `${user}'s calls to ${skill}` : `Calls to ${skill}`;
    this.raise({
      severity: 'warning',
      key: `breaker-open:${breaker}`,
      title: `Circuit breaker opened for ${skill}${user ? ` (user ${user})` : ''}`,
      detail: short(`${whose} are paused after repeated failures${lastError ? `; last: ${lastError}` : ''}`),
    });
  }

  /** A background job failed its last retry. */
  jobFailed(queue: string, jobId: string, error: string): void {
    this.raise({
      severity: 'error',
      key: `job-failed:${queue}`,
      title: `Job ${queue} failed after its last retry`,
      detail: short(`job ${jobId}: ${error}`),
    });
  }

  /** The sentinel stopped an action; the user is asked in the turn, the operator hears of it here. */
  sentinelRefused(refusal: { skill: string; userId: string; turnId: string | null }): void {
    this.raise({
      severity: 'warning',
      key: `sentinel-refusal:${refusal.skill}`,
      title: `The safety check stopped ${refusal.skill}`,
      detail: `user ${refusal.userId}${refusal.turnId ? `, turn ${refusal.turnId}` : ''}; the user was asked to confirm`,
    });
  }

  spendCap(cap: {
    kind: 'soft' | 'hard';
    userId: string;
    spentUsd: number;
    capUsd: number;
    date: string;
  }): void {
    const hard = cap.kind === 'hard';
    this.raise({
      severity: hard ? 'error' : 'warning',
      key: `spend-${cap.kind}:${cap.userId}:${cap.date}`,
      title: hard
        ? `Daily spend limit reached for ${cap.userId}: new turns are refused`
        : `Daily spend alert for ${cap.userId}`,
      detail: `$${cap.spentUsd.toFixed(4)} spent on ${cap.date} (UTC), ${hard ? 'limit' : 'alert at'} $${cap.capUsd.toFixed(2)}`,
    });
  }

  /** Call for every inbound webhook that failed verification; alerts above the configured rate. */
  webhookVerificationFailed(channel: string): void {
    const now = this.#now();
    const windowMs = this.#options.webhookWindowMs();
    const recent = (this.#webhookFailures.get(channel) ?? []).filter((at) => now - at < windowMs);
    recent.push(now);
    this.#webhookFailures.set(channel, recent);
    if (recent.length <= this.#options.webhookThreshold()) return;
    this.raise({
      severity: 'warning',
      key: `webhook-verification:${channel}`,
      title: `Inbound ${channel} webhooks are failing verification`,
      detail: `${recent.length} rejected in the last ${Math.round(windowMs / 60_000)} min: a wrong secret, or someone probing the endpoint`,
    });
  }

  /**
   * A delivery (a scheduled run's output, a reminder) failed on a user's channel and went to
   * their next channel, or — none left — to their dashboard inbox. Keyed by user and failing
   * channel, so a channel that is down raises one alert per throttle window, not one per message.
   */
  deliveryRerouted(trouble: {
    userId: string;
    source: string;
    failed: ReadonlyArray<{ channel: string; error: string | null }>;
    rerouted: { channel: string } | { inbox: true };
  }): void {
    const last = trouble.failed.at(-1);
    const failedOn = trouble.failed.map((attempt) => attempt.channel).join(', ') || 'its channel';
    const where =
      'inbox' in trouble.rerouted
        ? 'It waits in their dashboard inbox'
        : `Sent on ${trouble.rerouted.channel} instead`;
    // An error either way: a channel that refuses deliveries (a blocked bot, a revoked token)
    // needs the owner, and the owner's alert channel takes errors by default.
    this.raise({
      severity: 'error',
      key:
        'inbox' in trouble.rerouted
          ? `delivery-unreached:${trouble.userId}`
          : `delivery-rerouted:${trouble.userId}:${last?.channel ?? 'unknown'}`,
      title:
        'inbox' in trouble.rerouted
          ? `A ${trouble.source} delivery to ${trouble.userId} reached no channel (${failedOn} failed)`
          : `A ${trouble.source} delivery to ${trouble.userId} failed on ${failedOn}`,
      detail: short(`${where}. ${last ? `Last failure: ${last.error ?? 'refused'}` : ''}`.trim()),
    });
  }

  /** A workflow (scheduled or on demand) run failed. */
  workflowFailed(run: { workflow: string; userId: string; error: string }): void {
    this.raise({
      severity: 'error',
      key: `workflow-failed:${run.workflow}`,
      title: `Workflow ${run.workflow} failed`,
      detail: short(`user ${run.userId}: ${run.error}`),
    });
  }
}
