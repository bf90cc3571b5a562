import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { captureLogger } from '../skills/registry/write-skill-tree.ts';
import { loadConfig } from './load.ts';
import { pendingRestart, pendingRestartCheck } from './pending-restart.ts';
import { ConfigStore } from './store.ts';

const stores: ConfigStore[] = [];
afterEach(() => {
  for (const store of stores.splice(0)) store.close();
});

/** A store over a fresh folder with no steward.yaml, watching it as the server does. */
function watchedStore() {
  const cwd = mkdtempSync(path.join(os.tmpdir(), 'steward-store-'));
  const env = { STEWARD_DATA_DIR: path.join(cwd, 'data') };
  // The server made its data dir before it watches.
  mkdirSync(env.STEWARD_DATA_DIR);
  const store = new ConfigStore(loadConfig({ env, cwd }), { env, cwd });
  stores.push(store);
  const { logger, records } = captureLogger();
  store.watch(logger);
  const messages = () => records.map((record) => String(record.msg));
  return { cwd, store, messages, dataDir: path.join(cwd, 'data') };
}

/** Polls until `probe` holds; the 2 s of the contract are measured in bench/, not here. */
async function until(what: string, probe: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('ConfigStore.watch', () => {
  it('picks up a steward.yaml created after start, logging "configuration reloaded"', async () => {
    const { cwd, store, messages } = watchedStore();
    expect(store.get().configPath).toBeNull();
    writeFileSync(path.join(cwd, 'steward.yaml'), 'log_level: debug\nlimits:\n  max_message_chars: 5000\n');
    await until('the new file to be read', () => store.get().limits.max_message_chars === 5000);
    expect(store.get().configPath).toBe(path.join(cwd, 'steward.yaml'));
    expect(messages()).toContain('configuration reloaded');
    expect(store.needsRestart()).toEqual([]);
  });

  it('says a start-only change needs a restart instead of "configuration reloaded", and records it for doctor', async () => {
    const { cwd, store, messages, dataDir } = watchedStore();
    expect(pendingRestart(dataDir)).toBeNull();
    writeFileSync(
      path.join(cwd, 'steward.yaml'),
      'mcp_servers:\n  - name: notes\n    command: node\n    args: ["notes-server.js"]\nlimits:\n  max_message_chars: 6000\n',
    );
    await until('the change to be read', () => store.get().limits.max_message_chars === 6000);
    expect(store.needsRestart()).toEqual(['mcp_servers']);
    expect(messages()).not.toContain('configuration reloaded');
    expect(messages()).toContain(
      'configuration changed: mcp_servers needs a restart to take effect (every other change took effect)',
    );
    expect(pendingRestart(dataDir)).toMatchObject({ pid: process.pid, settings: ['mcp_servers'] });
    expect(pendingRestartCheck(dataDir)?.detail).toContain('mcp_servers');

    // Taking the change back: nothing waits on a restart any more.
    writeFileSync(path.join(cwd, 'steward.yaml'), 'limits:\n  max_message_chars: 7000\n');
    await until('the revert to be read', () => store.get().limits.max_message_chars === 7000);
    expect(store.needsRestart()).toEqual([]);
    expect(pendingRestart(dataDir)).toBeNull();
    expect(messages().at(-1)).toBe('configuration reloaded');
  });
});
