import { TurnEngine } from '../src/agents/index.ts';
import type { ResolvedConfig } from '../src/config/index.ts';
import { createDbUsageRecorder, createLlmClient } from '../src/llm/index.ts';
import { silentLogger } from '../src/logging/index.ts';
import { Observability } from '../src/observability/index.ts';
import { backends } from '../test/support/db.ts';
import { type FakeLlm, startFakeLlm } from '../test/support/fake-llm.ts';
import { startFakeOtlpCollector } from '../test/support/fake-otlp-collector.ts';
import { ROLE_MODELS, startTestSteward, type TestSteward } from '../test/support/steward.ts';
import { type Bench, type BenchSection, ms, percentile, useBenchDatabase } from './lib.ts';

/*
 * The engine-overhead turn of agents.bench.ts (one orchestrator call answered at once by the
 * fake LLM over loopback), run by three engines over the same database and runtime: without
 * any observer, with metrics (and log context, alerts, spend hooks), and with metrics plus
 * OTLP tracing to a fake collector. Blocks of turns alternate between the engines so drift in
 * the machine's speed falls on all three alike.
 */

type Variant = { name: string; engine: TurnEngine; observability: Observability | null };

const BLOCKS = 8;
const TURNS_PER_BLOCK = 25;
const WARMUP = 20;

function engineFor(
  steward: TestSteward,
  config: ResolvedConfig,
  observability: Observability | null,
): TurnEngine {
  const { runtime } = steward;
  const store = createDbUsageRecorder(steward.db.database);
  const llm = createLlmClient(config, {
    recorder: observability ? observability.recorder(store) : store,
    ...(observability ? { onFallback: observability.onFallback } : {}),
  });
  return new TurnEngine({
    database: steward.db.database,
    llm,
    executor: runtime.executor,
    skills: () => runtime.skills.snapshot(),
    handlers: runtime.handlers,
    config: () => config,
    logger: runtime.logger,
    ...(observability ? { observe: observability.observe, beforeTurn: observability.beforeTurn } : {}),
  });
}

async function overhead(
  fake: FakeLlm,
  backend: 'pglite' | 'postgres',
  collectorUrl: string,
): Promise<Array<Array<string | number>>> {
  const steward = await startTestSteward(backend, fake, { extraYaml: 'sentinel: { enabled: false }\n' });
  fake.respondWith((request) =>
    request.body.model === ROLE_MODELS.orchestrator
      ? { text: 'ok' }
      : { text: '{"summary":"","topic_changed":false}' },
  );
  const config = steward.config;
  const traced: ResolvedConfig = {
    ...config,
    tracing: { ...config.tracing, otlp_endpoint: collectorUrl, otlp_protocol: 'http/protobuf' },
  };
  const observe = (with_: ResolvedConfig) =>
    Observability.create({ config: () => with_, database: steward.db.database, logger: silentLogger() });
  const metricsOnly = await observe(config);
  const withTracing = await observe(traced);
  const variants: Variant[] = [
    { name: 'no observer', engine: engineFor(steward, config, null), observability: null },
    { name: 'metrics', engine: engineFor(steward, config, metricsOnly), observability: metricsOnly },
    {
      name: 'metrics + tracing',
      engine: engineFor(steward, traced, withTracing),
      observability: withTracing,
    },
  ];
  const durations = new Map<string, number[]>(variants.map((variant) => [variant.name, []]));
  let index = 0;
  const turn = (variant: Variant) =>
    variant.engine.handle({
      userId: 'bench',
      text: `ping ${index++}`,
      channel: 'cli',
      newConversation: index % 10 === 0,
    });
  try {
    for (const variant of variants) for (let warm = 0; warm < WARMUP; warm++) await turn(variant);
    for (let block = 0; block < BLOCKS; block++) {
      for (const variant of variants) {
        for (let count = 0; count < TURNS_PER_BLOCK; count++) {
          const started = performance.now();
          await turn(variant);
          durations.get(variant.name)!.push(performance.now() - started);
        }
      }
    }
    const base = percentile(durations.get('no observer')!, 50);
    return variants.map((variant) => {
      const samples = durations.get(variant.name)!;
      const p50 = percentile(samples, 50);
      const added = variant.observability ? `${(((p50 - base) / base) * 100).toFixed(1)} %` : '—';
      return [backend, variant.name, samples.length, ms(p50), ms(percentile(samples, 99)), added];
    });
  } finally {
    fake.respondWith(null);
    await Promise.all([metricsOnly.close(), withTracing.close()]);
    await steward.close();
  }
}

/** CPU time of the observer alone for one turn's events, synthetic and in-process (no I/O). */
async function observerCost(collectorUrl: string, traced: boolean): Promise<number> {
  const steward = {
    tracing: { service_name: 'steward', ...(traced ? { otlp_endpoint: collectorUrl } : {}) },
  };
  const config = {
    ...(await import('../src/config/index.ts')).loadConfig({ env: {}, cwd: process.cwd() }),
    ...steward,
  };
  const observability = await Observability.create({
    config: () => config,
    database: { query: async () => [] },
    logger: silentLogger(),
  });
  const usage = {
    promptTokens: 1200,
    cachedTokens: 1000,
    cacheWriteTokens: 0,
    completionTokens: 20,
    cost: 0.001,
  };
  const record = observability.recorder(() => undefined);
  const turns = 20_000;
  const started = performance.now();
  for (let index = 0; index < turns; index++) {
    const turnId = `t${index}`;
    const ref = { turnId, conversationId: 'c', userId: 'u', channel: 'cli' };
    observability.observe(
      { type: 'turn_start', turnId, conversationId: 'c', mode: 'multi_agent', resumed: false },
      ref,
    );
    record({ turnId, role: 'orchestrator', model: 'm', usage, latencyMs: 5 });
    observability.observe(
      { type: 'llm_call', role: 'orchestrator', model: 'm', usage, latencyMs: 5, agentId: null },
      ref,
    );
    observability.observe(
      { type: 'turn_end', turnId, status: 'completed', reply: 'ok', usage, receipts: [] },
      ref,
    );
  }
  const perTurn = ((performance.now() - started) * 1000) / turns;
  await observability.close();
  return perTurn;
}

const bench: Bench = async (): Promise<BenchSection> => {
  await useBenchDatabase();
  const [fake, collector] = await Promise.all([startFakeLlm(), startFakeOtlpCollector()]);
  try {
    const rows: Array<Array<string | number>> = [];
    for (const backend of backends()) rows.push(...(await overhead(fake, backend, collector.url)));
    const metricsMicros = await observerCost(collector.url, false);
    const tracingMicros = await observerCost(collector.url, true);
    return {
      title: 'Observability overhead per turn (instant model)',
      description: `The engine-overhead turn of the agents benchmark run by three engines sharing one runtime: no observer; metrics (prom-client counters and histograms, log context, alert and spend hooks, no caps set); metrics plus OTLP/HTTP protobuf tracing to a fake collector (batched export). ${BLOCKS} alternating blocks of ${TURNS_PER_BLOCK} turns per engine after ${WARMUP} warm-up turns each; "added" compares p50 with the engine without observer.`,
      columns: ['backend', 'engine', 'turns', 'p50', 'p99', 'added (p50)'],
      rows,
      notes: [
        `The observer alone (synthetic turn_start, one LLM call, turn_end; 20,000 turns in process): ${metricsMicros.toFixed(1)} µs per turn with metrics, ${tracingMicros.toFixed(1)} µs with metrics and tracing (2 spans per turn, batched export) — against a turn of tens of milliseconds, well under 1 %. On a shared, loaded machine the end-to-end p50 differences above are mostly noise.`,
        `Spans received by the fake collector: ${collector.requests.length} export requests.`,
      ],
    };
  } finally {
    await Promise.all([fake.close(), collector.close()]);
  }
};
export default bench;
