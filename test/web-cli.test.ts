import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, runCli, startServer } from './support/cli.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { writeTestConfig } from './support/steward.ts';

/*
 * One-time login links: `steward dashboard` prints one (through the database with no server,
 * through the server's API while one runs), `steward start` prints one; each logs in once.
 */

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake?.close();
});

const LINK = /(http:\/\/127\.0\.0\.1:\d+)(\/login\/once\/[A-Za-z0-9_-]+)/;

describe('one-time login links', () => {
  it('steward dashboard and steward start print links that log in exactly once', async () => {
    const port = await freePort();
    const { env } = writeTestConfig(fake.url);
    const serverEnv = { ...env, PORT: String(port) };

    const offline = await runCli(['dashboard'], { env: serverEnv });
    expect(offline.code, offline.stderr).toBe(0);
    const offlinePath = LINK.exec(offline.stdout)?.[2];
    expect(offlinePath).toBeDefined();

    const server = await startServer({ env: serverEnv });
    try {
      const printed = LINK.exec(server.output());
      expect(printed?.[1]).toBe(server.url);
      const online = await runCli(['dashboard'], { env: serverEnv });
      expect(online.code, online.stderr).toBe(0);
      const onlinePath = LINK.exec(online.stdout)?.[2];
      expect(onlinePath).toBeDefined();

      for (const path of [offlinePath!, printed![2]!, onlinePath!]) {
        const first = await fetch(`${server.url}${path}`, { redirect: 'manual' });
        expect(first.status, path).toBe(302);
        const cookie = (first.headers.get('set-cookie') ?? '').split(';')[0]!;
        const page = await fetch(`${server.url}/turns`, { headers: { cookie }, redirect: 'manual' });
        expect(page.status).toBe(200);
        const again = await fetch(`${server.url}${path}`, { redirect: 'manual' });
        expect(again.status).toBe(401);
      }
      // The link never reaches the log file or the log lines.
      expect(server.output()).not.toMatch(/"msg":"[^"]*login\/once/);
    } finally {
      expect(await server.stop('SIGTERM')).toBe(0);
    }
  });
});
