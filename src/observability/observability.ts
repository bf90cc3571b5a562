import { readFileSync } from 'node:fs';
import type { TurnEvent, TurnRef } from '../agents/index.ts';
import type { ResolvedConfig } from '../config/index.ts';
import type { Queryable } from '../db/index.ts';
import { errorMessage } from '../errors.ts';
import type { JobFailure } from '../jobs/index.ts';
import type { FallbackListener, LlmCallRecord, UsageRecorder } from '../llm/index.ts';
import { enterLogContext, type Logger } from '../logging/index.ts';
import type { BreakerChange, SentinelDecisionEvent } from '../skills/index.ts';
import { type AlertRouter, type Alerts, createAlerts, type DestinationSeams } from './create-alerts.ts';
import { loadTracing, otlpSettings, type Tracing, type TurnSpans } from './load-tracing.ts';
import { SpendGuard } from './spend-guard.ts';
import type { MetricsSources, StewardMetrics, WebhookResult } from './steward-metrics.ts';

const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

const CLOSE_GRACE_MS = 5_000;

export type ObservabilityOptions = {
  config: () => ResolvedConfig;
  database: Queryable;
  logger: Logger;
  /** Alert destinations beyond the webhook: the owner's mailbox (`sendEmail`) and chat channel (`deliverToOwner`). */
  seams?: DestinationSeams;
  /** Where scrape-time metric values come from; read at each scrape, so they may name parts built later. */
  metricsSources?: MetricsSources;
  /** Secrets beyond the configuration's (stored credentials), kept out of alerts. */
  secrets?: () => readonly string[];
  /** Prometheus metrics (loads prom-client): a server wants them, a one-shot command need not. Default true. */
  metrics?: boolean;
  now?: () => Date;
};

type Loaded = {
  metrics: StewardMetrics | null;
  traced: { tracing: Tracing; spans: TurnSpans } | null;
  tracingProblem: string | null;
};

/**
 * Metrics, traces, alerts and spend caps, fed by the same sources: turn events (`observe`),
 * every LLM attempt (`recorder`), breaker changes, job failures and LLM fallbacks. Every hook
 * is quick and never throws into the code that calls it.
 */
export class Observability {
  /** Null when metrics are off (one-shot commands). */
  readonly metrics: StewardMetrics | null;
  readonly alerts: Alerts;
  readonly spend: SpendGuard;
  /** Why tracing is off although an OTLP endpoint is set (null when fine or not asked for). */
  readonly tracingProblem: string | null;
  readonly #router: AlertRouter;
  readonly #tracing: Tracing | null;
  readonly #spans: TurnSpans | null;
  readonly #logger: Logger;

  /** Loads only what the configuration asks for (the tracing SDK, prom-client). */
  static async create(options: ObservabilityOptions): Promise<Observability> {
    const { settings, problem } = otlpSettings(options.config().tracing);
    if (problem) options.logger.warn(`tracing is off: ${problem}`);
    const traced = settings ? await loadTracing(settings, VERSION) : null;
    const metrics =
      options.metrics === false
        ? null
        : new (await import('./steward-metrics.ts')).StewardMetrics(options.metricsSources);
    return new Observability(options, { metrics, traced, tracingProblem: problem });
  }

  private constructor(options: ObservabilityOptions, loaded: Loaded) {
    const { config, logger } = options;
    this.#logger = logger;
    this.metrics = loaded.metrics;
    const { alerts, router } = createAlerts(config, options.seams ?? {}, logger, options.secrets);
    this.alerts = alerts;
    this.#router = router;
    this.spend = new SpendGuard({
      database: options.database,
      spend: () => config().spend,
      alert: (cap) => alerts.spendCap(cap),
      logger,
      now: options.now,
    });
    this.tracingProblem = loaded.tracingProblem;
    this.#tracing = loaded.traced?.tracing ?? null;
    this.#spans = loaded.traced?.spans ?? null;
  }

  get tracingEnabled(): boolean {
    return this.#tracing !== null;
  }

  /** The turn engine's observer. */
  readonly observe = (event: TurnEvent, turn: TurnRef): void => {
    // turn_start is emitted inside the turn's own async function: its ids then ride on every
    // log line the turn writes (see enterLogContext).
    if (event.type === 'turn_start')
      enterLogContext({ turnId: turn.turnId, conversationId: turn.conversationId });
    this.metrics?.turnEvent(event, turn);
    this.#spans?.turnEvent(event, turn);
    if (event.type === 'turn_end') void this.spend.afterTurn(turn);
  };

  /** The engine's `beforeTurn`: the hard spend cap. */
  readonly beforeTurn = (turn: TurnRef): Promise<string | null> => this.spend.beforeTurn(turn);

  /** Wraps the recorder that stores llm_calls, so every attempt also feeds metrics, alerts and traces. */
  recorder(store: UsageRecorder): UsageRecorder {
    return (record: LlmCallRecord) => {
      this.#safely('llm call', () => {
        this.metrics?.llmCall(record);
        this.alerts.llmCall(record);
        this.#spans?.llmCall(record);
      });
      return store(record);
    };
  }

  readonly onFallback: FallbackListener = (event) =>
    this.#safely('fallback', () => this.alerts.llmFailover(event));

  /** The executor's `onSentinelDecision`: metrics, the sentinel span, and an alert on a refusal. */
  readonly onSentinelDecision = (decision: SentinelDecisionEvent): void =>
    this.#safely('sentinel', () => {
      this.metrics?.sentinelDecision(decision);
      this.#spans?.sentinelDecision(decision);
      if (!decision.approved) {
        this.alerts.sentinelRefused({
          skill: decision.skill,
          userId: decision.userId,
          turnId: decision.turnId,
        });
      }
    });

  readonly onBreakerChange = (change: BreakerChange): void =>
    this.#safely('breaker', () => {
      if (change.state === 'open') this.alerts.breakerOpened(change.skill, change.lastError);
    });

  readonly onJobFailure = (failure: JobFailure): void =>
    this.#safely('job failure', () => {
      this.metrics?.jobFailed(failure);
      if (failure.final) this.alerts.jobFailed(failure.queue, failure.jobId, failure.error);
    });

  /** For channel adapters: every inbound webhook once verified or rejected. */
  webhookReceived(channel: string, result: WebhookResult): void {
    this.#safely('webhook', () => {
      this.metrics?.webhookReceived(channel, result);
      if (result === 'rejected') this.alerts.webhookVerificationFailed(channel);
    });
  }

  /** Sends queued alerts and exports finished spans now (tests, one-shot commands). */
  async flush(): Promise<void> {
    await Promise.all([this.#router.flush(), this.#tracing?.flush()]);
  }

  /** Delivers what is queued (for at most a few seconds: a destination may be down), then stops. */
  async close(): Promise<void> {
    const grace = new Promise((resolve) => setTimeout(resolve, CLOSE_GRACE_MS).unref());
    await Promise.race([this.#router.flush(), grace]);
    await this.#tracing
      ?.shutdown()
      .catch((error) => this.#logger.warn({ err: errorMessage(error) }, 'span export failed'));
    this.#router.close();
  }

  #safely(what: string, run: () => void): void {
    try {
      run();
    } catch (error) {
      this.#logger.warn({ err: error }, `observability hook failed (${what})`);
    }
  }
}
