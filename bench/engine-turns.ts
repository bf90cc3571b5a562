import path from 'node:path';
import { pathToFileURL } from 'node:url';

/*
 * One version's engine in a process of its own (agents.bench.ts forks it): a runtime on a new
 * test database of `ENGINE_BACKEND`, from the tree at `ENGINE_ROOT` (this one or the baseline's
 * checkout), talking to the fake model at `FAKE_URL`, which runs in the bench's process — so the
 * fake's own work and garbage are not this process's. Around every turn it asks the bench,
 * over IPC, to note the fake's time before it starts, and reports the turn's wall time after.
 */

type Reply = { ok: true };

const ask = (message: object) =>
  new Promise<Reply>((resolve) => {
    process.once('message', (reply) => resolve(reply as Reply));
    process.send!(message);
  });

const root = process.env.ENGINE_ROOT!;
const backend = process.env.ENGINE_BACKEND as 'pglite' | 'postgres';
const turns = Number(process.env.ENGINE_TURNS ?? 120);
const support = (file: string) => import(pathToFileURL(path.join(root, 'test', 'support', file)).href);
const { startTestSteward } = (await support('steward.ts')) as {
  startTestSteward: (
    backend: string,
    fake: { url: string },
    options: { extraYaml: string },
  ) => Promise<{
    runtime: { engine: { handle(input: object): Promise<unknown> } };
    close(): Promise<void>;
  }>;
};
const steward = await startTestSteward(
  backend,
  { url: process.env.FAKE_URL! },
  {
    extraYaml: 'sentinel: { enabled: false }\n',
  },
);
try {
  for (let index = 0; index < turns; index++) {
    await ask({ type: 'start' });
    const started = performance.now();
    await steward.runtime.engine.handle({ userId: 'local', text: `ping ${index}`, channel: 'cli' });
    await ask({ type: 'end', index, took: performance.now() - started });
  }
} finally {
  await steward.close();
  process.disconnect();
}
