import { describe, expect, it } from 'vitest';
import { createTask } from '../src/tasks/index.ts';
import { createApiToken, ensureUser } from '../src/users/index.ts';
import { createLoginCode, LoginThrottle, markdownToHtml, webRoutes } from '../src/web/index.ts';
import { approve, dispatch, getResults, reply, run, scriptModels, slow } from './support/agent-scripts.ts';
import { backends } from './support/db.ts';
import { useFakeLlm } from './support/fake-llm.ts';
import { runAsCli } from './support/steward.ts';
import { loginAs, OWNER_TOKEN, useWebSteward } from './support/web.ts';

/*
 * The dashboard over HTTP: login (cookie, throttle, one-time links, logout, CSRF), every page,
 * per-user visibility, escaping of model/user/skill text, the chat's SSE stream, and a turn's
 * trace page with its live events.
 */

const PAGES = ['/', '/chat', '/turns', '/skills', '/tasks', '/memories', '/schedules', '/channels', '/usage'];
const XSS = '<script>alert("pwned")</script>';

type SseEvent = { event: string; data: Record<string, unknown> };
function parseSse(body: string): SseEvent[] {
  return body
    .split(/\n\n+/)
    .filter((block) => block.includes('data:'))
    .map((block) => ({
      event: /^event: ?(.*)$/m.exec(block)?.[1] ?? 'message',
      data: JSON.parse(
        block
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).trimStart())
          .join('\n'),
      ) as Record<string, unknown>,
    }));
}

describe('markdown', () => {
  it('shows raw HTML as text and renders its own markup', () => {
    const out = markdownToHtml(
      `**bold** and ${XSS}\n\n- one\n- [link](https://example.org/a?b=1)\n\n\`<b>\``,
    );
    expect(out).toContain('<strong>bold</strong>');
    expect(out).toMatch(/&lt;script&gt;alert\(("|&quot;)pwned("|&quot;)\)&lt;\/script&gt;/);
    expect(out).not.toContain('<script');
    expect(out).toContain('<li><a href="https://example.org/a?b=1" rel="noopener noreferrer">link</a></li>');
    expect(out).toContain('<code>&lt;b&gt;</code>');
    expect(markdownToHtml('[x](javascript:alert(1))')).not.toContain('href');
  });
});

describe('login throttle', () => {
  it('locks an address out after 5 failures in 5 minutes, then lets it in again', () => {
    const throttle = new LoginThrottle();
    const t0 = 1_000_000;
    for (let i = 0; i < 4; i++) throttle.fail('a', t0 + i);
    expect(throttle.retryAfter('a', t0 + 10)).toBe(0);
    throttle.fail('a', t0 + 20);
    expect(throttle.retryAfter('a', t0 + 30)).toBe(300);
    expect(throttle.retryAfter('b', t0 + 30)).toBe(0);
    expect(throttle.retryAfter('a', t0 + 300_001)).toBe(0);
  });
});

for (const backend of backends()) {
  describe(`dashboard [${backend}]`, () => {
    const fake = useFakeLlm();
    const steward = useWebSteward(backend, fake);

    it('sends every page to /login without a session; the login page has a token field', async () => {
      for (const path of [...PAGES, '/turns/abc']) {
        const response = await fetch(`${steward.url}${path}`, { redirect: 'manual' });
        expect(response.status, path).toBe(302);
        expect(response.headers.get('location'), path).toBe('/login');
      }
      const login = await fetch(`${steward.url}/login`);
      expect(login.status).toBe(200);
      const body = await login.text();
      expect(body).toMatch(/<input[^>]*name="token"/);
      expect(login.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(login.headers.get('content-security-policy')).not.toContain('unsafe-inline');
      const icon = await fetch(`${steward.url}/favicon.ico`);
      expect(icon.status).toBe(200);
      expect(icon.headers.get('content-type')).toContain('image/svg+xml');
    });

    it('refuses a wrong token with 401 and an error on the page, and logs in with the right one', async () => {
      const wrong = await fetch(`${steward.url}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: 'not-the-token' }),
        redirect: 'manual',
      });
      expect(wrong.status).toBe(401);
      expect(await wrong.text()).toContain('That token is not valid');

      const right = await fetch(`${steward.url}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: OWNER_TOKEN }),
        redirect: 'manual',
      });
      expect(right.status).toBe(303);
      const cookie = right.headers.get('set-cookie') ?? '';
      expect(cookie).toMatch(/^steward_session=/);
      expect(cookie).toContain('HttpOnly');
      expect(cookie).toContain('SameSite=Strict');
      expect(cookie).not.toContain('Secure');
      const home = await fetch(`${steward.url}/`, {
        headers: { cookie: cookie.split(';')[0]! },
        redirect: 'manual',
      });
      expect(home.status).toBe(302);
      expect(home.headers.get('location')).toBe('/chat');
    });

    it('throttles an address after 5 failures (429 + Retry-After), never the right token; Secure over https', async () => {
      const app = webRoutes({
        database: steward.runtime.database,
        engine: steward.runtime.engine,
        llm: steward.runtime.llm,
        turnEvents: steward.runtime.turnEvents,
        config: () => steward.runtime.config.get(),
        skills: () => steward.runtime.skills.snapshot(),
        breakers: async () => [],
      });
      const attempt = (token: string, base = 'http://localhost') =>
        app.request(`${base}/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token }).toString(),
        });
      const secure = await attempt(OWNER_TOKEN, 'https://localhost');
      expect(secure.status).toBe(303);
      expect(secure.headers.get('set-cookie')).toContain('Secure');
      for (let i = 0; i < 5; i++) expect((await attempt(`wrong-${i}`)).status).toBe(401);
      const locked = await attempt('wrong-again');
      expect(locked.status).toBe(429);
      expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await locked.text()).toContain('Too many failed logins');
      // Behind a reverse proxy everyone shares an address: the right token still logs in.
      expect((await attempt(OWNER_TOKEN)).status).toBe(303);
    });

    it('logs in once with a one-time link, and logs out', async () => {
      const code = await createLoginCode(steward.runtime.database, { userId: 'local', owner: true });
      const first = await fetch(`${steward.url}/login/once/${code}`, { redirect: 'manual' });
      expect(first.status).toBe(302);
      const cookie = (first.headers.get('set-cookie') ?? '').split(';')[0]!;
      expect((await fetch(`${steward.url}/tasks`, { headers: { cookie }, redirect: 'manual' })).status).toBe(
        200,
      );
      const again = await fetch(`${steward.url}/login/once/${code}`, { redirect: 'manual' });
      expect(again.status).toBe(401);
      expect(await again.text()).toContain('unknown, used or expired');

      const page = await (await fetch(`${steward.url}/tasks`, { headers: { cookie } })).text();
      const csrf = /name="csrf" value="([^"]+)"/.exec(page)![1]!;
      const noCsrf = await fetch(`${steward.url}/logout`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: '',
        redirect: 'manual',
      });
      expect(noCsrf.status).toBe(403);
      const out = await fetch(`${steward.url}/logout`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf }),
        redirect: 'manual',
      });
      expect(out.status).toBe(303);
      expect((await fetch(`${steward.url}/tasks`, { headers: { cookie }, redirect: 'manual' })).status).toBe(
        302,
      );
    });

    it('renders every page; a user sees only their own data, the owner everyone’s', async () => {
      const db = steward.runtime.database;
      await ensureUser(db, 'alice');
      await ensureUser(db, 'bob');
      const ctx = (userId: string) => ({
        database: db,
        userId,
        timezone: 'UTC',
        actor: `user:${userId}`,
        executionId: null,
        now: () => new Date(),
      });
      await createTask(ctx('alice'), { title: `Alice task ${XSS}` });
      await createTask(ctx('bob'), { title: 'Bob private task' });
      const aliceToken = (await createApiToken(db, 'alice')).token;
      const alice = await loginAs(steward.url, aliceToken);
      const owner = await loginAs(steward.url, OWNER_TOKEN);
      for (const path of PAGES.slice(1)) {
        const response = await alice.get(path);
        expect(response.status, path).toBe(200);
        const body = await response.text();
        expect(body, path).not.toContain('<script>alert');
        expect(response.headers.get('content-security-policy'), path).toContain("default-src 'self'");
      }
      const aliceTasks = await (await alice.get('/tasks')).text();
      expect(aliceTasks).toContain('Alice task &lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;');
      expect(aliceTasks).not.toContain('Bob private task');
      const ownerTasks = await (await owner.get('/tasks')).text();
      expect(ownerTasks).toContain('Bob private task');
      expect(ownerTasks).toContain('Alice task');
      const built = await runAsCli(
        steward.runtime,
        'alice',
        'workflow.build --name alice_digest --description "Digest for Alice" --steps "Use tasks.search to list open tasks" --schedule "0 9 * * *" --timezone Europe/Berlin',
      );
      expect(built.status, built.content).toBe('ok');
      await steward.runtime.workflows.sync(steward.runtime.skills.load());
      const aliceSchedules = await (await alice.get('/schedules')).text();
      expect(aliceSchedules).toContain('alice_digest');
      expect(aliceSchedules).toContain('Europe/Berlin');
      expect(aliceSchedules).toContain('Run now');
      const bob = await loginAs(steward.url, (await createApiToken(db, 'bob')).token);
      expect(await (await bob.get('/schedules')).text()).not.toContain('alice_digest');
      // Another user's workflow is not on /skills; its owner's and the install owner's pages show it.
      expect(await (await bob.get('/skills')).text()).not.toContain('alice_digest');
      expect(await (await alice.get('/skills')).text()).toContain('workflows.alice_digest');
      expect(await (await owner.get('/skills')).text()).toContain('(owner alice)');
      const stranger = await bob.post('/schedules/run', { name: 'workflows.alice_digest', user: 'alice' });
      expect(decodeURIComponent(stranger.headers.get('location') ?? '')).toContain('No such schedule');
      fake.respondWith(() => ({ text: 'Your digest: nothing open.' }));
      const started = await alice.post('/schedules/run', { name: 'workflows.alice_digest', user: 'alice' });
      expect(decodeURIComponent(started.headers.get('location') ?? '')).toContain('Started alice_digest');
      await expect
        .poll(
          async () =>
            (
              await db.query<{ status: string }>(
                "SELECT status FROM workflow_runs WHERE skill = 'workflows.alice_digest' AND user_id = 'alice'",
              )
            ).map((row) => row.status),
          { timeout: 60_000 },
        )
        .toEqual(['ok']);
      fake.respondWith(null);
      const noCsrf = await fetch(`${steward.url}/chat/new`, {
        method: 'POST',
        headers: { cookie: alice.cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: '',
        redirect: 'manual',
      });
      expect(noCsrf.status).toBe(403);
    });

    it('streams a chat reply over SSE, escapes it, and traces the turn’s DAG on /turns/:id', async () => {
      const models = scriptModels(fake, {
        orchestrator: [
          dispatch(
            { agent_id: 'maker', mission: 'Create the task', skills: ['tasks.create'] },
            {
              agent_id: 'checker',
              mission: 'Check the list',
              skills: ['tasks.search'],
              depends_on: ['maker'],
            },
          ),
          getResults(),
          reply(`Done: **made** it ${XSS}`),
        ],
        agents: {
          maker: [run(`tasks.create --title "Evil ${XSS}"`), reply('Created.')],
          checker: [run('tasks.search'), reply('Checked.')],
        },
        sentinel: [approve()],
      });
      const owner = await loginAs(steward.url, OWNER_TOKEN);
      const response = await fetch(`${steward.url}/chat/stream`, {
        method: 'POST',
        headers: {
          cookie: owner.cookie,
          'x-csrf-token': owner.csrf,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ text: `Make a task ${XSS}` }),
      });
      expect(response.headers.get('content-type')).toContain('text/event-stream');
      const events = parseSse(await response.text());
      models.assertDone();
      expect(events[0]?.event).toBe('turn');
      expect(events.some((event) => event.event === 'delta')).toBe(true);
      const done = events.at(-1)!;
      expect(done.event).toBe('done');
      expect(done.data.html).toContain('<strong>made</strong>');
      expect(done.data.html).not.toContain('<script');
      const turnId = done.data.turnId as string;

      const chat = await (await owner.get('/chat')).text();
      expect(chat).toMatch(/data-role="user"[^>]*>Make a task &lt;script&gt;/);
      expect(chat).toContain('data-role="reply"');
      expect(chat).toContain(`href="/turns/${turnId}"`);
      expect(chat).not.toContain('<script>alert');

      const page = await owner.get(`/turns/${turnId}`);
      expect(page.status).toBe(200);
      const body = await page.text();
      expect(body).not.toContain('<script>alert');
      expect(body).toContain('Evil &lt;script&gt;');
      const agents = [
        ...body.matchAll(
          /<article[^>]*data-agent-id="([^"]*)" data-depends-on="([^"]*)" data-status="([^"]*)"/g,
        ),
      ].map((match) => ({ id: match[1], dependsOn: match[2], status: match[3] }));
      expect(agents).toEqual([
        { id: 'maker', dependsOn: '', status: 'done' },
        { id: 'checker', dependsOn: 'maker', status: 'done' },
      ]);
      expect(body).toContain('tasks.create');
      expect(body).toMatch(/LLM orchestrator/);

      // Other users never see it; a malformed or unknown id is a 404 page.
      const bobToken = (await createApiToken(steward.runtime.database, 'bob')).token;
      const bob = await loginAs(steward.url, bobToken);
      expect((await bob.get(`/turns/${turnId}`)).status).toBe(404);
      expect((await bob.get(`/turns/${turnId}/events`)).status).toBe(404);
      const missing = await owner.get('/turns/00000000-0000-0000-0000-000000000000');
      expect(missing.status).toBe(404);
      expect(await missing.text()).toContain('Turn not found');
      expect((await owner.get('/turns/%3Cscript%3E')).status).toBe(404);
    });

    it('sends a running turn’s agents and calls live over /turns/:id/events', async () => {
      const models = scriptModels(fake, {
        orchestrator: [
          dispatch({ agent_id: 'slowpoke', mission: 'Search slowly', skills: ['tasks.search'] }),
          getResults(),
          reply('Finished.'),
        ],
        agents: { slowpoke: [slow(600, run('tasks.search')), reply('Nothing found.')] },
      });
      const owner = await loginAs(steward.url, OWNER_TOKEN);
      const chat = fetch(`${steward.url}/chat/stream`, {
        method: 'POST',
        headers: {
          cookie: owner.cookie,
          'x-csrf-token': owner.csrf,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ text: 'Search slowly' }),
      });
      // Wait for the turn to exist, then follow it.
      let turnId: string | undefined;
      for (let i = 0; i < 100 && !turnId; i++) {
        const rows = await steward.runtime.database.query<{ id: string }>(
          "SELECT id FROM turns WHERE request = 'Search slowly'",
        );
        turnId = rows[0]?.id;
        if (!turnId) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(turnId).toBeDefined();
      const live = await owner.get(`/turns/${turnId}/events`);
      expect(live.headers.get('content-type')).toContain('text/event-stream');
      const events = parseSse(await live.text());
      await (await chat).text();
      models.assertDone();
      const names = events.map((event) => event.event);
      expect(names).toContain('agent_dispatched');
      expect(names).toContain('agent_start');
      expect(names).toContain('skill_call_end');
      expect(names).toContain('llm_call');
      expect(names.at(-1)).toBe('turn_end');
      const ended = events.find((event) => event.event === 'agent_end');
      expect(ended?.data).toMatchObject({ agentId: 'slowpoke', status: 'done' });
    });
  });
}
