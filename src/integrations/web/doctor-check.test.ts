import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FAKE_BRAVE_KEY,
  type FakeSearch,
  startFakeBrave,
  startFakeSearxng,
} from '../../../test/support/fake-web-search.ts';
import { loadConfig } from '../../config/index.ts';
import { webChecks } from './doctor-check.ts';

describe('steward doctor: web', () => {
  let brave: FakeSearch;
  let searxng: FakeSearch;
  let closed: FakeSearch;
  beforeAll(async () => {
    [brave, searxng, closed] = await Promise.all([
      startFakeBrave(),
      startFakeSearxng(),
      startFakeSearxng({ json: false }),
    ]);
  });
  afterAll(() => Promise.all([brave, searxng, closed].map((server) => server?.close())));
  const checks = (env: Record<string, string>) => webChecks(loadConfig({ env, cwd: '/' }));

  it('says web search is off and how to turn it on, and what web.fetch may reach', async () => {
    const [search, fetch] = await checks({ STEWARD_WEB_ALLOW_HOSTS: 'nas.lan:80, [::1]:8080' });
    expect(search).toMatchObject({ ok: true, detail: expect.stringContaining('set BRAVE_SEARCH_API_KEY') });
    expect(fetch).toMatchObject({
      ok: true,
      detail: expect.stringContaining(
        'private hosts open: nas.lan:80, [::1]:8080; 200 web calls per user per day',
      ),
    });
  });

  it('asks the configured provider a test query, and names the fix when it refuses, never the key', async () => {
    const braveEnv = { BRAVE_SEARCH_API_URL: `${brave.url}/res/v1` };
    const [ok] = await checks({ ...braveEnv, BRAVE_SEARCH_API_KEY: FAKE_BRAVE_KEY });
    expect(ok).toEqual({
      name: 'web search',
      ok: true,
      detail: 'Brave Search answers (1 result for a test query)',
    });
    const [refused] = await checks({ ...braveEnv, BRAVE_SEARCH_API_KEY: 'BSA-not-the-key-0000' });
    expect(refused).toMatchObject({ ok: false, detail: expect.stringContaining('Set BRAVE_SEARCH_API_KEY') });
    expect(JSON.stringify(refused)).not.toContain('BSA-not-the-key');

    const [searx] = await checks({ SEARXNG_URL: searxng.url });
    expect(searx).toMatchObject({
      ok: true,
      detail: `SearXNG at ${searxng.url} answers (1 result for a test query)`,
    });
    const [noJson] = await checks({ SEARXNG_URL: closed.url });
    expect(noJson).toMatchObject({
      ok: false,
      detail: expect.stringContaining('adding json to search.formats'),
    });
    const [down] = await checks({ SEARXNG_URL: 'http://127.0.0.1:9' });
    expect(down).toMatchObject({ ok: false, fix: 'check SEARXNG_URL and that the instance is running' });
  });
});
