import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { dailyWebCalls } from '../src/integrations/index.ts';
import { createApiToken, ensureUser } from '../src/users/index.ts';
import { backends } from './support/db.ts';
import { makePdf } from './support/documents.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { type FakeSite, startFakeSite } from './support/fake-site.ts';
import {
  FAKE_BRAVE_KEY,
  type FakeSearch,
  startFakeBrave,
  startFakeSearxng,
} from './support/fake-web-search.ts';
import { startTestSteward, type TestSteward } from './support/steward.ts';
import { usageApiApp } from './support/web.ts';

/*
 * web.search and web.fetch through the real executor and runtime, against local fakes of Brave
 * Search, SearXNG and a web site (reached because web.allow_hosts lists its host:port), with
 * the budget counted in the database.
 */

const ARTICLE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Opening hours of the central pharmacy | Town News</title>
<meta name="author" content="Ana Lopez"></head>
<body>
<nav class="menu"><a href="/">Home</a> <a href="/sports">Sports</a> <a href="/weather">Weather</a> MENU-MARKER</nav>
<header><div class="logo">Town News</div></header>
<main><article>
<h1>Opening hours of the central pharmacy</h1>
<p class="byline">By Ana Lopez</p>
<p>The central pharmacy on <a href="/streets/main">Main Street</a> is open from <strong>8:00 to 20:00</strong> on weekdays and from 9:00 to 14:00 on Saturdays. It is closed on Sundays and public holidays, when the duty pharmacy takes over for the whole town.</p>
<h2>Duty pharmacy</h2>
<p>The duty pharmacy rotates every week between the four pharmacies of the town. The list is posted on the door of each pharmacy and on the town's website every Monday morning.</p>
<ul><li>North pharmacy, Station Road 4</li><li>South pharmacy, Market Square 1</li></ul>
<p>Prescriptions can be picked up at any time during opening hours; bring your health card and an identity document. <a href="javascript:alert(1)">Print this page</a></p>
<script>window.SCRIPT_MARKER = true;</script>
</article></main>
<footer>Copyright 2026 Town News FOOTER-MARKER</footer>
</body></html>`;

const PDF = makePdf([
  'Timetable Barcelona - Girona',
  'Departure 07:15 arrival 08:33',
  'Departure 09:45 arrival 11:02',
]);

let fake: FakeLlm;
let site: FakeSite;
let elsewhere: FakeSite;
let brave: FakeSearch;
let searxng: FakeSearch;
let closedSearxng: FakeSearch;
beforeAll(async () => {
  fake = await startFakeLlm();
  elsewhere = await startFakeSite({ '/secret': { type: 'text/plain', body: 'internal secret' } });
  site = await startFakeSite({
    '/article': { type: 'text/html; charset=utf-8', body: ARTICLE },
    '/timetable.pdf': { type: 'application/pdf', body: PDF },
    '/download': { type: 'application/octet-stream', body: PDF },
    '/notes.txt': { type: 'text/plain', body: 'Bring: passport, tickets.' },
    '/moved': { redirect: '/article', status: 301 },
    '/to-metadata': { redirect: 'http://169.254.169.254/latest/meta-data/iam/' },
    '/gone': { status: 410, type: 'text/html', body: '<html><body>Gone</body></html>' },
    '/photo.png': { type: 'image/png', body: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]) },
    '/huge': {
      stream: { chunk: `<p>${'All work and no play. '.repeat(440)}</p>\n`, times: 5_000, type: 'text/html' },
    },
    '/slow': { hang: true },
    '/long': {
      type: 'text/plain',
      body: Array.from(
        { length: 300 },
        (_, line) => `Line ${String(line + 1).padStart(3, '0')} of the long text.`,
      ).join('\n'),
    },
  });
  brave = await startFakeBrave();
  searxng = await startFakeSearxng();
  closedSearxng = await startFakeSearxng({ json: false });
});
afterAll(async () => {
  await Promise.all([fake, site, elsewhere, brave, searxng, closedSearxng].map((server) => server?.close()));
});

const sitePort = () => new URL(site.url).port;

/** The web settings of steward.yaml: the fake site is the one private host web.fetch may reach. */
function webYaml(search: string, limit = 1000): string {
  return [
    'web:',
    `  allow_hosts: ["127.0.0.1:${sitePort()}"]`,
    '  fetch_max_bytes: 200000',
    '  fetch_timeout_ms: 1500',
    search,
    'limits:',
    `  web_calls_per_user_per_day: ${limit}`,
    '',
  ].join('\n');
}
const braveYaml = () => `  brave: { api_key: "${FAKE_BRAVE_KEY}", api_url: "${brave.url}/res/v1" }`;

for (const backend of backends()) {
  describe(`web skills [${backend}]`, () => {
    let steward: TestSteward;
    beforeAll(async () => {
      steward = await startTestSteward(backend, fake, { extraYaml: webYaml(braveYaml()) });
    }, 120_000);
    afterAll(async () => {
      await steward?.close();
    });

    const run = (command: string, user = 'local') =>
      steward.runtime.executor.execute({
        command,
        caller: { kind: 'cli' },
        user: { id: user, timezone: 'UTC' },
        confirmed: true,
      });
    /**
     * Rewrites steward.yaml's web and limits settings and reloads the config, as an operator's
     * edit does (the reload reads the process environment, so it points there for the moment).
     */
    const reconfigure = (yaml: string) => {
      const path = steward.config.configPath!;
      const base = readFileSync(path, 'utf8').split('\nweb:\n')[0];
      writeFileSync(path, `${base}\n${yaml}`);
      vi.stubEnv('STEWARD_CONFIG', path);
      vi.stubEnv('STEWARD_DATA_DIR', steward.config.dataDir);
      try {
        expect(steward.runtime.config.reload()).toBeNull();
      } finally {
        vi.unstubAllEnvs();
      }
    };
    const calls = async (user: string) =>
      (await dailyWebCalls(steward.db.database, { days: 1, userId: user }))[0] ?? null;

    describe('web.fetch', () => {
      it('reads an article as markdown, fenced as web:URL, without menus, footers or scripts', async () => {
        const result = await run(`web.fetch --url ${site.url}/article`);
        expect(result.status).toBe('ok');
        const url = `${site.url}/article`;
        expect(result.content).toContain(`Fetched ${url} (web page as markdown).`);
        expect(result.content).toContain(`<external source="web:${url}">`);
        expect(result.content).toContain('# Opening hours of the central pharmacy');
        expect(result.content).toContain('**8:00 to 20:00**');
        expect(result.content).toContain('## Duty pharmacy');
        expect(result.content).toMatch(/^- +North pharmacy, Station Road 4$/m);
        // Relative links are made absolute; a script link keeps only its text.
        expect(result.content).toContain(`[Main Street](${site.url}/streets/main)`);
        expect(result.content).toContain('Print this page');
        expect(result.content).not.toContain('javascript:');
        for (const marker of ['MENU-MARKER', 'FOOTER-MARKER', 'SCRIPT_MARKER'])
          expect(result.content).not.toContain(marker);
        expect(result.metadata).toMatchObject({ url, kind: 'html', bytesCut: false, redirects: [] });
      });

      it('reads a PDF as its text, whether the server says PDF or just bytes', async () => {
        for (const path of ['/timetable.pdf', '/download']) {
          const result = await run(`web.fetch --url ${site.url}${path}`);
          expect(result.status, result.content).toBe('ok');
          expect(result.content).toContain('(PDF, 1 page)');
          expect(result.content).toContain(`<external source="web:${site.url}${path}">`);
          expect(result.content).toContain('Departure 07:15 arrival 08:33');
        }
      });

      it('follows a redirect it may follow, and says where it ended up', async () => {
        const result = await run(`web.fetch --url ${site.url}/moved`);
        expect(result.status).toBe('ok');
        expect(result.content).toContain(
          `Fetched ${site.url}/article (web page as markdown; redirected from ${site.url}/moved)`,
        );
        expect(result.content).toContain(`<external source="web:${site.url}/article">`);
      });

      it('refuses a redirect to the cloud metadata address, or to a private host not listed, before connecting', async () => {
        const metadata = await run(`web.fetch --url ${site.url}/to-metadata`);
        expect(metadata.status).toBe('error');
        expect(metadata.content).toBe(
          `Not fetched: ${site.url}/to-metadata redirected to http://169.254.169.254/latest/meta-data/iam/, which is refused: 169.254.169.254 resolves to 169.254.169.254, a link-local address; list 169.254.169.254:80 in web.allow_hosts (STEWARD_WEB_ALLOW_HOSTS) if Steward should reach it.`,
        );
        // The other local server is loopback too, but its port is not in web.allow_hosts.
        const bounce = await startFakeSite({ '/away': { redirect: `${elsewhere.url}/secret` } });
        try {
          reconfigure(
            webYaml(braveYaml()).replace(
              `"127.0.0.1:${sitePort()}"`,
              `"127.0.0.1:${sitePort()}", "127.0.0.1:${new URL(bounce.url).port}"`,
            ),
          );
          const result = await run(`web.fetch --url ${bounce.url}/away`);
          expect(result.status).toBe('error');
          expect(result.content).toContain(`redirected to ${elsewhere.url}/secret, which is refused`);
          expect(result.content).toContain(
            `a loopback address; list 127.0.0.1:${new URL(elsewhere.url).port} in web.allow_hosts`,
          );
          expect(bounce.requests).toEqual(['/away']);
          expect(elsewhere.requests).toEqual([]);
        } finally {
          reconfigure(webYaml(braveYaml()));
          await bounce.close();
        }
      });

      it('refuses a private address that is not listed, and other schemes, without counting a call', async () => {
        const before = await calls('stranger');
        const direct = await run(`web.fetch --url ${elsewhere.url}/secret`, 'stranger');
        expect(direct.status).toBe('error');
        expect(direct.content).toContain(
          `Not fetched: 127.0.0.1 resolves to 127.0.0.1, a loopback address; list 127.0.0.1:${new URL(elsewhere.url).port} in web.allow_hosts`,
        );
        expect(elsewhere.requests).toEqual([]);
        for (const url of ['file:///etc/passwd', 'ftp://example.com/file.txt', 'gopher://127.0.0.1:70/']) {
          const result = await run(`web.fetch --url ${url}`, 'stranger');
          expect(result.status).toBe('error');
          expect(result.content).toContain(
            'addresses are refused; web.fetch reads http and https pages only',
          );
        }
        const notUrl = await run('web.fetch --url example.com/page', 'stranger');
        expect(notUrl.content).toContain(
          'is not a URL: give a full address such as https://example.com/page',
        );
        expect(await calls('stranger')).toEqual(before);
      });

      it('cuts an oversized page at web.fetch_max_bytes, says so, and hangs up on the server', async () => {
        const result = await run(`web.fetch --url ${site.url}/huge --max-chars 500`);
        expect(result.status, result.content).toBe('ok');
        expect(result.content).toContain(
          'Only the first 200000 bytes of the page were read (web.fetch_max_bytes): its text was cut there, and the page goes on.',
        );
        expect(result.metadata).toMatchObject({ bytes: 200_000, bytesCut: true });
        // The server saw the connection close long before its 50 MB were sent.
        const record = site.streams.get('/huge')!;
        await vi.waitFor(() => expect(record.closed).toBe(true), { timeout: 10_000 });
        expect(record.finished).toBe(false);
        expect(record.written).toBeLessThan(record.total);
      });

      it('shows at most --max-chars, with the --offset that reads on', async () => {
        const first = await run(`web.fetch --url ${site.url}/long --max-chars 200`);
        expect(first.status).toBe('ok');
        const total = (first.metadata as { chars: number }).chars;
        expect(first.content).toContain(`Characters 1–200 of ${total}.`);
        expect(first.content).toContain(
          `Cut: ${total - 200} more characters. Read on with web.fetch --url ${site.url}/long --offset 200`,
        );
        const next = await run(`web.fetch --url ${site.url}/long --max-chars 200 --offset 200`);
        expect(next.content).toContain(`Characters 201–400 of ${total}.`);
        const fence = (text: string) => /<external [^>]*>\n([\s\S]*?)\n<\/external>/.exec(text)![1]!;
        expect(fence(first.content) + fence(next.content)).toBe(
          Array.from(
            { length: 300 },
            (_, line) => `Line ${String(line + 1).padStart(3, '0')} of the long text.`,
          )
            .join('\n')
            .slice(0, 400),
        );
        const past = await run(`web.fetch --url ${site.url}/long --offset ${total + 5}`);
        expect(past.content).toContain(`--offset ${total + 5} is past the end`);
      });

      it('says what went wrong with an HTTP error, a non-page, a timeout and a bad flag', async () => {
        const gone = await run(`web.fetch --url ${site.url}/gone`);
        expect(gone).toMatchObject({
          status: 'error',
          content: `Not fetched: ${site.url}/gone answered HTTP 410 Gone.`,
        });
        const image = await run(`web.fetch --url ${site.url}/photo.png`);
        expect(image.content).toBe(
          `${site.url}/photo.png is image/png, not a web page, text or PDF: web.fetch reads only those.`,
        );
        const slow = await run(`web.fetch --url ${site.url}/slow`);
        expect(slow.content).toBe(
          `Not fetched: ${site.url}/slow did not answer in full within 1.5 s (web.fetch_timeout_ms).`,
        );
        reconfigure(
          webYaml(braveYaml()).replace(
            `"127.0.0.1:${sitePort()}"`,
            `"127.0.0.1:${sitePort()}", "127.0.0.1:9"`,
          ),
        );
        try {
          const closed = await run('web.fetch --url http://127.0.0.1:9/');
          expect(closed.content).toBe(
            'Not fetched: 127.0.0.1:9 could not be reached (connect ECONNREFUSED 127.0.0.1:9).',
          );
        } finally {
          reconfigure(webYaml(braveYaml()));
        }
        const text = await run(`web.fetch --url ${site.url}/notes.txt`);
        expect(text.content).toContain('(text)');
        expect(text.content).toContain('Bring: passport, tickets.');
        const tooMuch = await run(`web.fetch --url ${site.url}/article --max-chars 50000`);
        expect(tooMuch.status).toBe('error');
        expect(tooMuch.content).toContain('--max-chars');
        expect(tooMuch.content).toContain('at most 7000');
      });
    });

    describe('web.search', () => {
      it('asks Brave with the key, count and freshness, and shows each result fenced with its date', async () => {
        brave.requests.length = 0;
        const result = await run('web.search --query "pharmacy opening hours" --limit 2 --freshness week');
        expect(result.status, result.content).toBe('ok');
        const [request] = brave.requests;
        expect(request!.headers['x-subscription-token']).toBe(FAKE_BRAVE_KEY);
        expect(Object.fromEntries(request!.query)).toMatchObject({
          q: 'pharmacy opening hours',
          count: '2',
          freshness: 'pw',
          text_decorations: 'false',
        });
        expect(result.content).toBe(
          [
            '2 results from the past week for "pharmacy opening hours" from Brave Search, best first. Read a page with web.fetch --url URL.',
            '<external source="web:https://pharmacy.example.com/hours">',
            '1. Central Pharmacy - Opening Hours',
            'https://pharmacy.example.com/hours · 2026-01-05',
            'The central pharmacy is open from 8:00 to 20:00 on weekdays & 9:00 to 14:00 on Saturdays.',
            '</external>',
            '<external source="web:https://town.example.org/duty-pharmacies">',
            '2. Duty pharmacies this week',
            'https://town.example.org/duty-pharmacies · 5 hours ago',
            'The duty pharmacy rotates every week between the four pharmacies of the town.',
            '</external>',
          ].join('\n'),
        );
        expect(result.content).not.toContain(FAKE_BRAVE_KEY);
      });

      it('reports a refused Brave key with the setting to fix, never the key, and a Brave outage as one', async () => {
        reconfigure(
          webYaml(`  brave: { api_key: "BSA-wrong-key-00000000", api_url: "${brave.url}/res/v1" }`),
        );
        try {
          const refused = await run('web.search --query weather');
          expect(refused.status).toBe('error');
          expect(refused.content).toContain(
            'Brave Search refused the API key (HTTP 422 SUBSCRIPTION_TOKEN_INVALID',
          );
          expect(refused.content).toContain('Set BRAVE_SEARCH_API_KEY');
          expect(refused.content).not.toContain('BSA-wrong-key');
        } finally {
          reconfigure(webYaml(braveYaml()));
        }
        brave.failNext({
          status: 503,
          json: { type: 'ErrorResponse', error: { status: 503, code: 'UNAVAILABLE' } },
        });
        const down = await run('web.search --query weather');
        expect(down.content).toContain('web.search failed: Brave Search is unavailable (HTTP 503');
      });

      it('uses SearXNG when it is the provider configured: time range, no duplicates, and a 403 explained', async () => {
        reconfigure(webYaml(`  searxng: { url: "${searxng.url}" }`));
        try {
          const result = await run('web.search --query "pharmacy opening hours" --freshness month');
          expect(result.status, result.content).toBe('ok');
          expect(Object.fromEntries(searxng.requests.at(-1)!.query)).toEqual({
            q: 'pharmacy opening hours',
            format: 'json',
            time_range: 'month',
          });
          expect(result.content).toContain(
            `2 results from the past month for "pharmacy opening hours" from SearXNG at ${searxng.url}`,
          );
          expect(result.content).toContain('https://pharmacy.example.com/hours · 2026-01-05');
          expect(
            result.content.match(/<external source="web:https:\/\/pharmacy\.example\.com\/hours">/g),
          ).toHaveLength(1);
          reconfigure(webYaml(`  searxng: { url: "${closedSearxng.url}" }`));
          const closed = await run('web.search --query weather');
          expect(closed.status).toBe('error');
          expect(closed.content).toContain(
            'refused the JSON API (HTTP 403): enable it by adding json to search.formats',
          );
        } finally {
          reconfigure(webYaml(braveYaml()));
        }
      });

      it('says how to configure a provider when there is none, without counting a call', async () => {
        reconfigure(webYaml(''));
        try {
          const before = await calls('local');
          const result = await run('web.search --query weather');
          expect(result.status).toBe('error');
          expect(result.content).toContain('Web search is not configured. Set BRAVE_SEARCH_API_KEY');
          expect(result.content).toContain('SEARXNG_URL');
          expect(await calls('local')).toEqual(before);
        } finally {
          reconfigure(webYaml(braveYaml()));
        }
      });
    });

    describe('the daily budget of web calls', () => {
      it('refuses the call past the limit for that user only, and counts searches and fetches apart', async () => {
        reconfigure(webYaml(braveYaml(), 3));
        try {
          expect((await run('web.search --query one', 'budgeted')).status).toBe('ok');
          expect((await run(`web.fetch --url ${site.url}/notes.txt`, 'budgeted')).status).toBe('ok');
          expect((await run('web.search --query three', 'budgeted')).status).toBe('ok');
          const fourth = await run(`web.fetch --url ${site.url}/notes.txt`, 'budgeted');
          expect(fourth.status).toBe('error');
          expect(fourth.content).toBe(
            'Not done: the daily budget of web calls is used up (3 of 3 today, limits.web_calls_per_user_per_day); it starts again at 00:00 UTC. Tell the user, and answer from what you already have.',
          );
          expect((await run('web.search --query mine', 'someone-else')).status).toBe('ok');
          expect(await calls('budgeted')).toEqual({
            date: new Date().toISOString().slice(0, 10),
            user: 'budgeted',
            searches: 2,
            fetches: 1,
            calls: 3,
          });
        } finally {
          reconfigure(webYaml(braveYaml()));
        }
      });

      it('GET /api/usage lists web calls beside the LLM days, each user seeing only their own', async () => {
        await ensureUser(steward.db.database, 'budgeted');
        const app = usageApiApp(steward);
        const usage = async (token?: string) =>
          (await (
            await app.request('/api/usage?days=1', {
              headers: token ? { authorization: `Bearer ${token}` } : {},
            })
          ).json()) as { days: unknown[]; web_calls: Array<{ user: string; calls: number }> };
        const everyone = await usage();
        expect(everyone.days).toEqual([]);
        expect(everyone.web_calls.map((row) => row.user)).toEqual(
          expect.arrayContaining(['budgeted', 'someone-else']),
        );
        const { token } = await createApiToken(steward.db.database, 'budgeted');
        expect((await usage(token)).web_calls).toEqual([
          expect.objectContaining({ user: 'budgeted', calls: 3 }),
        ]);
      });

      it('never lets concurrent calls past the limit', async () => {
        reconfigure(webYaml(braveYaml(), 4));
        try {
          const results = await Promise.all(
            Array.from({ length: 10 }, () => run(`web.fetch --url ${site.url}/notes.txt`, 'racer')),
          );
          expect(results.filter((result) => result.status === 'ok')).toHaveLength(4);
          expect((await calls('racer'))?.calls).toBe(4);
        } finally {
          reconfigure(webYaml(braveYaml()));
        }
      });
    });
  });
}
