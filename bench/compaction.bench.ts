import { COMPACTION_JOB } from '../src/memory/background.ts';
import { backends } from '../test/support/db.ts';
import { startFakeLlm } from '../test/support/fake-llm.ts';
import { ROLE_MODELS, startTestSteward } from '../test/support/steward.ts';
import { type Bench, useBenchDatabase } from './lib.ts';

const CONVERSATIONS = 100;

/**
 * Compaction throughput: one finished turn in each of 100 conversations queues 100 jobs; the
 * queue then runs them in this process (fetch, fold the turn with the model, store the new
 * summary version, complete). The model answers instantly, so this measures Steward's side.
 */
const bench: Bench = async () => {
  await useBenchDatabase();
  const fake = await startFakeLlm();
  const rows: Array<Array<string | number>> = [];
  try {
    for (const backend of backends()) {
      const steward = await startTestSteward(backend, fake, {
        memory: true,
        extraYaml: 'memory: { compaction_delay_seconds: 3600 }\n',
      });
      fake.respondWith((request) =>
        request.body.model === ROLE_MODELS.compaction
          ? {
              text: JSON.stringify({
                summary: 'The user said hello and got an answer.',
                topic_changed: false,
                memory: null,
              }),
            }
          : { text: 'Hello!' },
      );
      try {
        for (let index = 0; index < CONVERSATIONS; index++) {
          await steward.runtime.engine.handle({
            userId: 'local',
            text: `hello ${index}`,
            channel: 'cli',
            newConversation: true,
          });
        }
        const started = performance.now();
        const ran = await steward.runtime.jobs.drain([COMPACTION_JOB]);
        const seconds = (performance.now() - started) / 1000;
        const [versions] = await steward.db.database.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM conversation_summaries',
        );
        rows.push([backend, ran, versions!.n, `${seconds.toFixed(2)} s`, (ran / seconds).toFixed(1)]);
      } finally {
        fake.respondWith(null);
        await steward.close();
      }
    }
  } finally {
    await fake.close();
  }
  return {
    title: 'Compaction jobs per second',
    description:
      'One finished turn in each of 100 conversations, each queuing a compaction job; the queue runs them one after another in this process against an instant fake model (fetch job, fold the turn, store a summary version, complete job).',
    columns: ['backend', 'jobs run', 'summary versions', 'time', 'jobs/s'],
    rows,
  };
};
export default bench;
