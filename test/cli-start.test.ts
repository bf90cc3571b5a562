import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort, runCli, startServer } from './support/cli.ts';

const tempDir = () => mkdtempSync(path.join(os.tmpdir(), 'steward-cli-'));

describe('steward start', () => {
  it('serves /readyz on the embedded database, refuses a second owner, and stops on SIGTERM', async () => {
    const dataDir = tempDir();
    const port = await freePort();
    const server = await startServer({ env: { STEWARD_DATA_DIR: dataDir, PORT: String(port) } });
    try {
      const ready = await fetch(`${server.url}/readyz`);
      expect(await ready.json()).toMatchObject({ status: 'ready', database: 'pglite' });
      expect(server.output()).toContain('No LLM is configured');
      expect(server.output()).toContain('steward onboard');

      const second = await runCli(['start'], {
        env: { STEWARD_DATA_DIR: dataDir, PORT: String(await freePort()) },
      });
      expect(second.code).toBe(1);
      expect(second.stderr).toContain(
        `in use by Steward process ${server.child.pid} serving on port ${port}`,
      );
    } finally {
      expect(await server.stop('SIGTERM')).toBe(0);
    }
  });

  it('stops with exit code 2 and one line naming a bad key', async () => {
    const result = await runCli(['start'], { env: { STEWARD_DATA_DIR: tempDir(), PORT: 'not-a-port' } });
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('PORT');
  });

  it('refuses a non-loopback address without an API token', async () => {
    const result = await runCli(['start'], {
      env: { STEWARD_DATA_DIR: tempDir(), HOST: '0.0.0.0', PORT: String(await freePort()) },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('STEWARD_API_TOKEN');
  });
});
