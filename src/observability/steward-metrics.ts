import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { TurnEvent, TurnRef } from '../agents/index.ts';
import type { QueueDepth } from '../jobs/index.ts';
import type { LlmCallRecord } from '../llm/index.ts';
import type { BreakerState } from '../skills/index.ts';

export const TURN_MODES = ['multi_agent', 'single_loop', 'direct'] as const;
export const TURN_STATUSES = ['completed', 'paused', 'failed', 'interrupted'] as const;
/** Channels that receive webhooks; each starts at zero so dashboards see them before traffic. */
export const WEBHOOK_CHANNELS = ['telegram', 'slack', 'whatsapp', 'google_chat'] as const;
export type WebhookResult = 'verified' | 'rejected';
const TOKEN_KINDS = ['prompt', 'cached', 'completion'] as const;
const BREAKER_VALUE: Record<BreakerState, number> = { closed: 0, half_open: 1, open: 2 };
/** Turns still open are forgotten beyond this many (a turn whose end was never seen). */
const MAX_OPEN_TURNS = 10_000;

export type MetricsSeed = {
  /** The models each role is configured with. */
  llmModels: ReadonlyArray<{ role: string; model: string }>;
  skills: readonly string[];
};

export type MetricsSources = {
  queueDepths?: () => Promise<QueueDepth[]>;
  breakerStates?: () => Promise<Array<{ skill: string; state: BreakerState }>>;
  /** Bounds the `skill` label: an unknown name is counted as `unknown`. */
  isKnownSkill?: (name: string) => boolean;
  /** Outbound chat messages stored and not yet delivered. */
  outboxBacklog?: () => Promise<number>;
};

/**
 * Steward's Prometheus metrics (names prefixed `steward_`) beside prom-client's default
 * process metrics, in a registry of its own. Every listed series exists from start-up, at zero.
 */
export class StewardMetrics {
  readonly registry = new Registry();
  readonly #sources: MetricsSources;
  readonly #openTurns = new Map<string, { mode: string; startedMs: number }>();

  readonly turns = new Counter({
    name: 'steward_turns_total',
    help: 'Finished turns by agent mode and status',
    labelNames: ['mode', 'status'],
    registers: [this.registry],
  });
  readonly turnDuration = new Histogram({
    name: 'steward_turn_duration_seconds',
    help: 'Turn duration, from the stored message to the reply',
    labelNames: ['mode', 'status'],
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    registers: [this.registry],
  });
  readonly llmCalls = new Counter({
    name: 'steward_llm_calls_total',
    help: 'LLM call attempts by role, model and status (ok or error)',
    labelNames: ['role', 'model', 'status'],
    registers: [this.registry],
  });
  readonly llmTokens = new Counter({
    name: 'steward_llm_tokens_total',
    help: 'LLM tokens by role, model and kind (prompt includes cached; cached; completion)',
    labelNames: ['role', 'model', 'kind'],
    registers: [this.registry],
  });
  readonly llmCost = new Counter({
    name: 'steward_llm_cost_usd_total',
    help: 'LLM spend in US dollars at the roster prices',
    labelNames: ['role', 'model'],
    registers: [this.registry],
  });
  readonly llmDuration = new Histogram({
    name: 'steward_llm_call_duration_seconds',
    help: 'LLM call attempt latency',
    labelNames: ['role', 'model', 'status'],
    buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 40, 80, 160],
    registers: [this.registry],
  });
  readonly skillCalls = new Counter({
    name: 'steward_skill_calls_total',
    help: 'Skill calls made in turns, by skill and status',
    labelNames: ['skill', 'status'],
    registers: [this.registry],
  });
  readonly skillDuration = new Histogram({
    name: 'steward_skill_duration_seconds',
    help: 'Skill call duration',
    labelNames: ['skill', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly sentinelDecisions = new Counter({
    name: 'steward_sentinel_decisions_total',
    help: 'Sentinel reviews by skill and result (approved or refused)',
    labelNames: ['skill', 'result'],
    registers: [this.registry],
  });
  readonly webhooks = new Counter({
    name: 'steward_webhooks_total',
    help: 'Inbound webhooks by channel and verification result (verified or rejected)',
    labelNames: ['channel', 'result'],
    registers: [this.registry],
  });
  readonly jobFailures = new Counter({
    name: 'steward_job_failures_total',
    help: 'Failed background job runs by queue; final="true" when it was the last retry',
    labelNames: ['queue', 'final'],
    registers: [this.registry],
  });

  constructor(sources: MetricsSources = {}) {
    this.#sources = sources;
    collectDefaultMetrics({ register: this.registry });
    const current = () => this.#sources;
    new Gauge({
      name: 'steward_queue_depth',
      help: 'Background jobs by queue and state (ready, active, deferred)',
      labelNames: ['queue', 'state'],
      registers: [this.registry],
      async collect() {
        const { queueDepths } = current();
        if (!queueDepths) return;
        this.reset();
        for (const depth of await queueDepths().catch(() => [])) {
          this.set({ queue: depth.queue, state: 'ready' }, depth.ready);
          this.set({ queue: depth.queue, state: 'active' }, depth.active);
          this.set({ queue: depth.queue, state: 'deferred' }, depth.deferred);
        }
      },
    });
    new Gauge({
      name: 'steward_circuit_breaker_state',
      help: 'Per-skill circuit breaker: 0 closed, 1 half-open, 2 open',
      labelNames: ['skill'],
      registers: [this.registry],
      async collect() {
        const { breakerStates } = current();
        if (!breakerStates) return;
        this.reset();
        for (const { skill, state } of await breakerStates().catch(() => [])) {
          // Per-user breakers (`skill#user`) are left out: one series per skill.
          if (!skill.includes('#')) this.set({ skill }, BREAKER_VALUE[state]);
        }
      },
    });
    new Gauge({
      name: 'steward_outbox_backlog',
      help: 'Outbound messages stored and not yet delivered',
      registers: [this.registry],
      async collect() {
        const { outboxBacklog } = current();
        this.set(outboxBacklog ? await outboxBacklog().catch(() => 0) : 0);
      },
    });
    for (const mode of TURN_MODES) for (const status of TURN_STATUSES) this.turns.inc({ mode, status }, 0);
    for (const channel of WEBHOOK_CHANNELS) {
      for (const result of ['verified', 'rejected']) this.webhooks.inc({ channel, result }, 0);
    }
  }

  /** Starts the per-model and per-skill series at zero. */
  seed(seed: MetricsSeed): void {
    const models =
      seed.llmModels.length > 0 ? seed.llmModels : [{ role: 'orchestrator', model: 'unconfigured' }];
    for (const { role, model } of models) {
      for (const status of ['ok', 'error']) this.llmCalls.inc({ role, model, status }, 0);
      for (const kind of TOKEN_KINDS) this.llmTokens.inc({ role, model, kind }, 0);
      this.llmCost.inc({ role, model }, 0);
    }
    for (const skill of seed.skills) {
      for (const status of ['ok', 'error']) this.skillCalls.inc({ skill, status }, 0);
    }
  }

  /** The turn observer: turns and skill calls. */
  turnEvent(event: TurnEvent, turn: TurnRef): void {
    switch (event.type) {
      case 'turn_start':
        if (this.#openTurns.size >= MAX_OPEN_TURNS) this.#openTurns.clear();
        this.#openTurns.set(turn.turnId, { mode: event.mode, startedMs: performance.now() });
        return;
      case 'turn_end': {
        const open = this.#openTurns.get(turn.turnId);
        this.#openTurns.delete(turn.turnId);
        const labels = { mode: open?.mode ?? 'unknown', status: event.status };
        this.turns.inc(labels);
        if (open) this.turnDuration.observe(labels, (performance.now() - open.startedMs) / 1000);
        return;
      }
      case 'skill_call_end': {
        const labels = { skill: this.#skillLabel(event.skill), status: event.status };
        this.skillCalls.inc(labels);
        this.skillDuration.observe(labels, event.durationMs / 1000);
        return;
      }
      default:
    }
  }

  /** Every sentinel review (the executor's `onSentinelDecision`). */
  sentinelDecision(decision: { skill: string; approved: boolean }): void {
    this.sentinelDecisions.inc({
      skill: this.#skillLabel(decision.skill),
      result: decision.approved ? 'approved' : 'refused',
    });
  }

  /** Every LLM attempt, from the client's usage recorder (all roles, failures included). */
  llmCall(record: LlmCallRecord): void {
    const status = record.errorClass ? 'error' : 'ok';
    const { role, model, usage } = record;
    this.llmCalls.inc({ role, model, status });
    this.llmDuration.observe({ role, model, status }, record.latencyMs / 1000);
    if (usage.promptTokens) this.llmTokens.inc({ role, model, kind: 'prompt' }, usage.promptTokens);
    if (usage.cachedTokens) this.llmTokens.inc({ role, model, kind: 'cached' }, usage.cachedTokens);
    if (usage.completionTokens)
      this.llmTokens.inc({ role, model, kind: 'completion' }, usage.completionTokens);
    if (usage.cost) this.llmCost.inc({ role, model }, usage.cost);
  }

  jobFailed(failure: { queue: string; final: boolean }): void {
    this.jobFailures.inc({ queue: failure.queue, final: String(failure.final) });
  }

  /** For channel adapters: every inbound webhook, after verification. */
  webhookReceived(channel: string, result: WebhookResult): void {
    this.webhooks.inc({ channel, result });
  }

  /** The Prometheus text exposition. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  #skillLabel(skill: string | null | undefined): string {
    if (!skill) return 'unparsed';
    if (skill === 'get_skill' || (this.#sources.isKnownSkill?.(skill) ?? true)) return skill;
    return 'unknown';
  }
}
