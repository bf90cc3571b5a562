import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort, runCli, startServer } from './support/cli.ts';

/** Polls until `probe` holds (the contract's 2 s is a bench figure, not asserted here). */
async function until(what: string, probe: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('steward.yaml written while the server runs', () => {
  it('is picked up when it appears; a start-only change says it needs a restart, in the log and in doctor', async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'steward-reload-'));
    const env = {
      STEWARD_DATA_DIR: path.join(home, 'data'),
      PORT: String(await freePort()),
      LOG_LEVEL: 'info',
    };
    const server = await startServer({ env, cwd: home });
    try {
      expect(server.output()).not.toContain('configuration reloaded');
      writeFileSync(path.join(home, 'steward.yaml'), 'limits:\n  max_message_chars: 5000\n');
      await until('"configuration reloaded"', () => server.output().includes('configuration reloaded'));

      writeFileSync(
        path.join(home, 'steward.yaml'),
        'mcp_servers:\n  - name: notes\n    command: node\n    args: ["notes-server.js"]\n',
      );
      await until('"needs a restart"', () => server.output().includes('needs a restart'));
      expect(server.output()).toContain('configuration changed: mcp_servers needs a restart');

      const doctor = await runCli(['doctor'], { env, cwd: home, timeoutMs: 120_000 });
      expect(doctor.stdout).toMatch(
        /note config: steward\.yaml changed mcp_servers .* still uses the values it started with/,
      );
      expect(doctor.stdout).toContain('restart the server');
    } finally {
      await server.stop();
    }
    // Stopped: no server waits on a restart.
    const after = await runCli(['doctor'], { env, cwd: home, timeoutMs: 120_000 });
    expect(after.stdout).not.toContain('note config:');
  }, 240_000);
});
