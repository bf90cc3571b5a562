import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, startServer } from '../test/support/cli.ts';
import { type Bench, ms, percentile } from './lib.ts';

const RUNS = 5;

/** `steward start` until /readyz answers 200, on a new data dir and again on the same one. */
const bench: Bench = async () => {
  const fresh: number[] = [];
  const again: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'steward-startup-'));
    for (const samples of [fresh, again]) {
      const env = { STEWARD_DATA_DIR: dataDir, PORT: String(await freePort()), LOG_LEVEL: 'warn' };
      const started = performance.now();
      const server = await startServer({ env });
      samples.push(performance.now() - started);
      await server.stop('SIGTERM');
    }
  }
  return {
    title: 'Start-up: `steward start` to /readyz 200',
    description: `A new process on the embedded database, polled every 100 ms until /readyz answers 200; ${RUNS} runs each.`,
    columns: ['data dir', 'p50', 'max'],
    rows: [
      ['new (first start)', ms(percentile(fresh, 50)), ms(Math.max(...fresh))],
      ['existing (restart)', ms(percentile(again, 50)), ms(Math.max(...again))],
    ],
    notes: [
      'A new data dir starts as a copy of the embedded-database cluster `npm install` builds (every migration applied) instead of running initdb.',
    ],
  };
};
export default bench;
