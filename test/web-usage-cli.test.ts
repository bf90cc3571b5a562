import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli } from './support/cli.ts';
import { type FakeSite, startFakeSite } from './support/fake-site.ts';

/*
 * The web skills from the command line: `steward run` fetches a local page (opened through
 * STEWARD_WEB_ALLOW_HOSTS), and `steward usage` shows the web calls beside the LLM figures,
 * the JSON keeping its `days` field as it was.
 */

let site: FakeSite;
beforeAll(async () => {
  site = await startFakeSite({
    '/menu': { type: 'text/html', body: '<title>Menu</title><p>Soup of the day: leek and potato.</p>' },
  });
});
afterAll(() => site?.close());

it('steward run web.fetch counts a web call that steward usage shows, as a table and as JSON', async () => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'steward-web-'));
  const env = {
    STEWARD_DATA_DIR: path.join(home, 'data'),
    STEWARD_WEB_ALLOW_HOSTS: `127.0.0.1:${new URL(site.url).port}`,
  };
  const fetched = await runCli(['run', `web.fetch --url ${site.url}/menu`], { env, cwd: home });
  expect(fetched.code, fetched.stderr).toBe(0);
  expect(fetched.stdout).toContain(`<external source="web:${site.url}/menu">`);
  expect(fetched.stdout).toContain('Soup of the day: leek and potato.');

  const today = new Date().toISOString().slice(0, 10);
  const json = await runCli(['usage', '--json', '--days', '1'], { env, cwd: home });
  expect(json.code, json.stderr).toBe(0);
  expect(JSON.parse(json.stdout)).toEqual({
    days: [],
    web_calls: [{ date: today, user: 'local', searches: 0, fetches: 1, calls: 1 }],
  });
  const table = await runCli(['usage', '--days', '1'], { env, cwd: home });
  expect(table.stdout).toContain('No LLM calls in the last 1 day(s).');
  expect(table.stdout).toMatch(/date \(UTC\)\s+user\s+searches\s+fetches\s+web calls/);
  expect(table.stdout).toMatch(new RegExp(`${today}\\s+local\\s+0\\s+1\\s+1`));
}, 120_000);
