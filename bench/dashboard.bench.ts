import { randomUUID } from 'node:crypto';
import { ensureUser } from '../src/users/index.ts';
import { type FakeLlm, startFakeLlm } from '../test/support/fake-llm.ts';
import { loginAs, OWNER_TOKEN, startWebSteward } from '../test/support/web.ts';
import { type Bench, type BenchSection, ms, percentile, sample } from './lib.ts';

/*
 * The dashboard on PGlite with 10,000 turns and 100,000 skill calls stored (one agent and nine
 * skill calls per turn): server-side render time of each page as a browser fetches it over
 * loopback (logged in), and the latency from a skill-call event published on the turn hub to
 * its arrival in a /turns/:id/events stream.
 */

const TURNS = 10_000;
const CALLS_PER_TURN = 10; // one agent row and nine skill calls
const RENDERS = 30;
const SSE_SAMPLES = 100;

async function seed(
  database: Parameters<typeof ensureUser>[0],
): Promise<{ runningTurn: string; sampleTurn: string }> {
  await ensureUser(database, 'local');
  await database.query(
    `INSERT INTO conversations (id, user_id, channel)
     SELECT 'bench-conv-' || g, 'local', 'web' FROM generate_series(1, 100) g`,
  );
  await database.query(
    `INSERT INTO turns (id, conversation_id, user_id, status, mode, request, reply, channel, started_at, queued_at, finished_at)
     SELECT 'bench-turn-' || g, 'bench-conv-' || (g % 100 + 1), 'local', 'completed', 'multi_agent',
            'Request number ' || g, 'Reply **number** ' || g, 'web',
            now() - (g || ' seconds')::interval, now() - (g || ' seconds')::interval, now() - (g || ' seconds')::interval
     FROM generate_series(1, $1::int) g`,
    [TURNS],
  );
  await database.query(
    `INSERT INTO skill_executions (id, parent_id, turn_id, user_id, conversation_id, kind, agent_id, mission, depends_on, status, result, started_at, finished_at, duration_ms)
     SELECT 'bench-agent-' || g, NULL, 'bench-turn-' || g, 'local', 'bench-conv-' || (g % 100 + 1), 'agent', 'worker', 'Do the work', '[]'::jsonb,
            'completed', 'Worked.', now(), now(), 42
     FROM generate_series(1, $1::int) g`,
    [TURNS],
  );
  await database.query(
    `INSERT INTO skill_executions (id, parent_id, turn_id, user_id, conversation_id, kind, agent_id, skill, command, status, result, started_at, finished_at, duration_ms)
     SELECT 'bench-call-' || g || '-' || k, 'bench-agent-' || g, 'bench-turn-' || g, 'local', 'bench-conv-' || (g % 100 + 1), 'skill', 'worker',
            'tasks.search', 'tasks.search --query item' || k, 'ok', 'No tasks match.', now(), now(), 3
     FROM generate_series(1, $1::int) g, generate_series(1, $2::int) k`,
    [TURNS, CALLS_PER_TURN - 1],
  );
  const runningTurn = `bench-running-${randomUUID()}`;
  await database.query(
    `INSERT INTO turns (id, conversation_id, user_id, status, mode, request, channel) VALUES ($1, 'bench-conv-1', 'local', 'running', 'multi_agent', 'still going', 'web')`,
    [runningTurn],
  );
  return { runningTurn, sampleTurn: 'bench-turn-5000' };
}

const bench: Bench = async () => {
  const fake: FakeLlm = await startFakeLlm();
  const steward = await startWebSteward('pglite', fake);
  try {
    const { runningTurn, sampleTurn } = await seed(steward.runtime.database);
    const owner = await loginAs(steward.url, OWNER_TOKEN);
    const rows: Array<Array<string | number>> = [];
    for (const path of [
      '/turns',
      `/turns/${sampleTurn}`,
      '/chat',
      '/skills',
      '/tasks',
      '/memories',
      '/usage',
    ]) {
      await (await owner.get(path)).text(); // warm up
      const durations = await sample(RENDERS, async () => {
        const response = await owner.get(path);
        if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
        await response.text();
      });
      rows.push([path, ms(percentile(durations, 50)), ms(percentile(durations, 95))]);
    }
    const pages: BenchSection = {
      title: 'Dashboard page render (PGlite, 10k turns, 100k skill calls)',
      description: `Time to fetch each page whole over loopback as the owner (server render + database), ${RENDERS} fetches after one warm-up.`,
      columns: ['page', 'p50', 'p95'],
      rows,
    };

    // SSE: a skill-call event published on the turn hub, until the stream reader sees it.
    const response = await owner.get(`/turns/${runningTurn}/events`);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    const ref = { turnId: runningTurn, conversationId: 'bench-conv-1', userId: 'local', channel: 'web' };
    let buffer = '';
    const latencies: number[] = [];
    for (let index = 0; index < SSE_SAMPLES + 5; index++) {
      const executionId = `bench-exec-${index}`;
      const start = performance.now();
      steward.runtime.turnEvents.publish(
        {
          type: 'skill_call_end',
          agentId: 'worker',
          command: 'tasks.search',
          skill: 'tasks.search',
          status: 'ok',
          durationMs: 1,
          executionId,
        },
        ref,
      );
      while (!buffer.includes(executionId)) {
        const { value, done } = await reader.read();
        if (done) throw new Error('the event stream ended');
        buffer += value;
      }
      buffer = buffer.slice(buffer.indexOf(executionId));
      if (index >= 5) latencies.push(performance.now() - start);
    }
    await reader.cancel();
    const sse: BenchSection = {
      title: 'Live trace latency (SSE)',
      description: `From a skill_call_end event published on the turn hub to its arrival in an open /turns/:id/events stream over loopback, ${SSE_SAMPLES} events.`,
      columns: ['p50', 'p95', 'max'],
      rows: [[ms(percentile(latencies, 50)), ms(percentile(latencies, 95)), ms(Math.max(...latencies))]],
    };
    return [pages, sse];
  } finally {
    await steward.stop();
    await fake.close();
  }
};

export default bench;
