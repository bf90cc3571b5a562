import { messageText } from '../test/support/agent-scripts.ts';
import { startCluster } from '../test/support/cluster.ts';
import { type FakeRequest, startFakeLlm } from '../test/support/fake-llm.ts';
import { type Bench, ms, percentile, useBenchDatabase } from './lib.ts';

/*
 * Scale-out (issue 17): the same load through 1, 2 and 3 `steward start` processes on one
 * PostgreSQL database, with a model that answers at once: turns per second and reply latency.
 */

const CONVERSATIONS = 60;
const MESSAGES = 4;
const CONCURRENT_CONVERSATIONS = 20;

function ownText(request: FakeRequest): string {
  const last = (request.body.messages ?? []).filter((message) => message.role === 'user').at(-1);
  if (!last) return '';
  return typeof last.content === 'string' ? last.content : messageText([last.content.at(-1)!]);
}

async function run(instances: number): Promise<{ perSecond: number; latencies: number[]; failed: number }> {
  const fake = await startFakeLlm();
  fake.respondWith((request) => ({ text: `reply to ${ownText(request)}` }));
  const cluster = await startCluster({ count: instances, fake });
  const latencies: number[] = [];
  let failed = 0;
  try {
    // Warm-up: every instance answers once (connections, prepared statements).
    for (let index = 0; index < instances; index++) {
      await cluster.chat(index, { user: `warm-${index}`, text: 'hello' });
    }
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENT_CONVERSATIONS }, async () => {
        while (next < CONVERSATIONS) {
          const n = next++;
          // A conversation's messages one after another, each to the next instance.
          for (let k = 0; k < MESSAGES; k++) {
            const sent = performance.now();
            const response = await cluster.chat((n + k) % instances, {
              user: `bench-${n}`,
              text: `c${n} m${k}`,
            });
            const body = (await response.json()) as { status?: string };
            if (response.status !== 200 || body.status !== 'completed') failed++;
            latencies.push(performance.now() - sent);
          }
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    return { perSecond: latencies.length / seconds, latencies, failed };
  } finally {
    await cluster.stop();
    await fake.close();
  }
}

const bench: Bench = async () => {
  const server = await useBenchDatabase();
  const title = 'Scale-out: instances on one PostgreSQL database';
  if (!server) {
    return {
      title,
      description:
        'Skipped: no PostgreSQL server answers (BENCH_DATABASE_URL / TEST_DATABASE_URL / 127.0.0.1:5432).',
      columns: ['instances'],
      rows: [],
    };
  }
  const rows: Array<Array<string | number>> = [];
  for (const instances of [1, 2, 3]) {
    const result = await run(instances);
    rows.push([
      instances,
      result.perSecond.toFixed(1),
      ms(percentile(result.latencies, 50)),
      ms(percentile(result.latencies, 99)),
      result.failed,
    ]);
  }
  return {
    title,
    description: `${CONVERSATIONS} API conversations × ${MESSAGES} messages, ${CONCURRENT_CONVERSATIONS} conversations at a time, each message to the next instance (round robin), model answering at once: POST /api/chat until the reply.`,
    columns: ['instances', 'turns/s', 'p50 reply', 'p99 reply', 'failed'],
    rows,
    notes: [
      'All instances, the database and the load generator share this machine, so extra instances add CPU contention as much as capacity: on a 2-core machine the figure shows the cost of coordination (advisory locks, liveness checks), not the gain of more hosts.',
    ],
  };
};
export default bench;
