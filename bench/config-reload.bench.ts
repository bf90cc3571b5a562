import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigStore, loadConfig } from '../src/config/index.ts';
import { silentLogger } from '../src/logging/index.ts';
import { type Bench, ms, percentile } from './lib.ts';

const ROUNDS = 20;

/**
 * How long a written steward.yaml takes to be in force (the contract: within 2 s), for a file
 * created after start and for edits of it, as `steward start` watches it.
 */
const bench: Bench = async () => {
  const cwd = mkdtempSync(path.join(os.tmpdir(), 'steward-bench-reload-'));
  const env = { STEWARD_DATA_DIR: path.join(cwd, 'data') };
  mkdirSync(env.STEWARD_DATA_DIR);
  const store = new ConfigStore(loadConfig({ env, cwd }), { env, cwd });
  store.watch(silentLogger());
  const inForce = async (chars: number): Promise<number> => {
    const started = performance.now();
    writeFileSync(path.join(cwd, 'steward.yaml'), `limits:\n  max_message_chars: ${chars}\n`);
    while (store.get().limits.max_message_chars !== chars)
      await new Promise((resolve) => setTimeout(resolve, 5));
    return performance.now() - started;
  };
  try {
    const created = await inForce(5000);
    const edits: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      edits.push(await inForce(5000 + round));
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    return {
      title: 'Configuration reload',
      description: `Time from writing steward.yaml to the new value being in force (ConfigStore.watch: a folder watch, 100 ms debounce); the file created after start, then ${ROUNDS} edits.`,
      columns: ['case', 'p50', 'max'],
      rows: [
        ['created after start', ms(created), ms(created)],
        ['edited', ms(percentile(edits, 50)), ms(Math.max(...edits))],
      ],
    };
  } finally {
    store.close();
    rmSync(cwd, { recursive: true, force: true });
  }
};
export default bench;
