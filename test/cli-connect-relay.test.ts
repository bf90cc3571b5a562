import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, runCli, startServer } from './support/cli.ts';
import { startFakeHubspot } from './support/fake-hubspot.ts';

/* `steward connect` while `steward start` owns the embedded database: it relays, like other commands. */

const TOKEN = 'pat-na1-relay-token-0123';

describe('steward connect against a running server', { timeout: 180_000 }, () => {
  let hubspot: Awaited<ReturnType<typeof startFakeHubspot>>;
  let server: Awaited<ReturnType<typeof startServer>>;
  let env: Record<string, string>;
  beforeAll(async () => {
    hubspot = await startFakeHubspot({ token: TOKEN });
    const dir = mkdtempSync(path.join(os.tmpdir(), 'steward-connect-relay-'));
    env = {
      STEWARD_CONFIG: '/dev/null',
      STEWARD_DATA_DIR: path.join(dir, 'data'),
      STEWARD_API_TOKEN: 'relay-owner-token-0123456789',
    };
    server = await startServer({ env: { ...env, PORT: String(await freePort()) } });
  });
  afterAll(async () => {
    await server?.stop();
    await hubspot?.close();
  });

  it('checks its own arguments first, whether or not a server runs', async () => {
    const missing = await runCli(['connect', 'hubspot', '--user', 'bob'], { env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('steward connect hubspot: give --token');
    expect(missing.stderr).not.toContain('server');
    const unknown = await runCli(['connect', 'fax'], { env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown provider "fax"');
  });

  it('connects through the server (which checks the token with the provider), refuses a wrong one, and disconnects', async () => {
    const wrong = await runCli(
      ['connect', 'hubspot', '--user', 'bob', '--token', 'pat-na1-wrong-000000', '--base-url', hubspot.url],
      { env },
    );
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('steward connect hubspot: not connected');
    expect(wrong.stderr).not.toContain('pat-na1-wrong-000000');
    const connected = await runCli(
      ['connect', 'hubspot', '--user', 'bob', '--token', TOKEN, '--base-url', hubspot.url],
      {
        env,
      },
    );
    expect(connected.stderr).toBe('');
    expect(connected.code).toBe(0);
    expect(connected.stdout).toBe('Connected hubspot (HubSpot) for user bob.\n');
    const gone = await runCli(['disconnect', 'hubspot', '--user', 'bob'], { env });
    expect(gone.code).toBe(0);
    expect(gone.stdout).toContain('Disconnected hubspot for user bob.');
    const again = await runCli(['disconnect', 'hubspot', '--user', 'bob'], { env });
    expect(again.stdout).toContain('No stored hubspot account for user bob.');
  });
});
