import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createDbUsageRecorder } from '../src/llm/index.ts';
import { createTask } from '../src/tasks/index.ts';
import { createApiToken, ensureUser } from '../src/users/index.ts';
import { backends } from './support/db.ts';
import { useFakeLlm } from './support/fake-llm.ts';
import { runAsCli } from './support/steward.ts';
import { loginAs, OWNER_TOKEN, useWebSteward } from './support/web.ts';

/*
 * The dashboard's actions over HTTP: tasks filtered, marked done, edited and archived;
 * schedules created, paused, resumed and run with their runs' output and delivery; a mistyped
 * URL answered as a page to a browser and as JSON to an API client. Every action keeps the
 * CSRF check and acts only on the session's own data (the owner's: anyone's).
 */

const noticeOf = (response: Response) =>
  decodeURIComponent((response.headers.get('location') ?? '').replaceAll('+', ' '));

for (const backend of backends()) {
  describe(`dashboard actions [${backend}]`, () => {
    const logFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'steward-logs-')), 'steward.log');
    const logLine = (level: number, msg: string, fields: Record<string, unknown> = {}) =>
      `${JSON.stringify({ level, time: Date.now(), pid: 1, hostname: 'h', msg, ...fields })}\n`;
    const fake = useFakeLlm();
    beforeAll(() => {
      writeFileSync(
        logFile,
        logLine(30, 'Steward is listening') +
          logLine(40, 'slow disk', { path: '/data' }) +
          logLine(50, 'request failed <b>'),
      );
    });
    const steward = useWebSteward(backend, fake, { logFile });

    const ctx = (userId: string) => ({
      database: steward.runtime.database,
      userId,
      timezone: 'UTC',
      actor: `user:${userId}`,
      executionId: null,
      now: () => new Date(),
    });
    const created = async (userId: string, input: Parameters<typeof createTask>[1]) => {
      const outcome = await createTask(ctx(userId), input);
      if (!outcome.ok) throw new Error(outcome.message);
      return outcome.value;
    };

    it('filters tasks, marks one done, edits and archives, only the session’s own', async () => {
      const db = steward.runtime.database;
      await ensureUser(db, 'carol');
      await ensureUser(db, 'dave');
      const today = new Date().toISOString().slice(0, 10);
      const overdue = await created('carol', {
        title: 'Pay the overdue bill',
        priority: 'high',
        dueDate: '2020-01-02',
      });
      const later = await created('carol', { title: 'Plan the trip', priority: 'low' });
      const dueToday = await created('carol', { title: 'Water the plants', dueDate: today });
      const daves = await created('dave', { title: 'Dave private task' });
      const carol = await loginAs(steward.url, (await createApiToken(db, 'carol')).token);

      const list = await (await carol.get('/tasks')).text();
      expect(list.match(/>Mark done</g)?.length).toBe(3);
      expect(list).not.toContain('Dave private task');
      const ids = (body: string) => [...body.matchAll(/data-task-id="([^"]+)"/g)].map((match) => match[1]);
      expect(ids(await (await carol.get('/tasks?priority=high')).text())).toEqual([overdue.id]);
      expect(ids(await (await carol.get('/tasks?due=overdue')).text())).toEqual([overdue.id]);
      expect(ids(await (await carol.get('/tasks?due=today')).text())).toEqual([dueToday.id]);
      expect(ids(await (await carol.get('/tasks?due=none')).text())).toEqual([later.id]);
      expect(await (await carol.get('/tasks?priority=critical')).text()).toContain(
        'No task matches this filter',
      );

      const done = await carol.post(`/tasks/${overdue.id}/done`, { priority: 'high' });
      expect(done.status).toBe(303);
      expect(noticeOf(done)).toContain('/tasks?priority=high&notice=Done: Pay the overdue bill');
      const afterDone = await (await carol.get('/tasks?status=done')).text();
      expect(ids(afterDone)).toEqual([overdue.id]);
      expect(afterDone).not.toContain('>Mark done<');
      expect(ids(await (await carol.get('/tasks?due=overdue')).text())).toEqual([]);

      const edited = await carol.post(`/tasks/${later.id}/edit`, {
        title: 'Plan the trip to Lisbon',
        priority: 'critical',
        due_date: '2030-05-01',
      });
      expect(noticeOf(edited)).toContain('Saved title, priority, due date.');
      const editedPage = await (await carol.get('/tasks?priority=critical')).text();
      expect(editedPage).toContain('Plan the trip to Lisbon');
      expect(editedPage).toContain('due 2030-05-01');
      const badDate = await carol.post(`/tasks/${later.id}/edit`, {
        title: 'x',
        priority: 'low',
        due_date: 'next tuesday',
      });
      expect(noticeOf(badDate)).toContain('Not saved: "next tuesday" is not a date. Use YYYY-MM-DD.');
      expect(
        noticeOf(await carol.post(`/tasks/${later.id}/edit`, { title: ' ', priority: 'low' })),
      ).toContain('Not saved: a task needs a title.');

      const archived = await carol.post(`/tasks/${dueToday.id}/archive`, {});
      expect(noticeOf(archived)).toContain('Archived: Water the plants.');
      expect(ids(await (await carol.get('/tasks')).text())).not.toContain(dueToday.id);

      // Another user's task: as unknown as a task that does not exist, and left untouched.
      for (const action of ['done', 'archive'] as const) {
        expect(noticeOf(await carol.post(`/tasks/${daves.id}/${action}`, {}))).toContain('No such task.');
      }
      expect(
        noticeOf(await carol.post(`/tasks/${daves.id}/edit`, { title: 'Hijacked', priority: 'low' })),
      ).toContain('No such task.');
      const owner = await loginAs(steward.url, OWNER_TOKEN);
      const ownerList = await (await owner.get('/tasks')).text();
      expect(ownerList).toContain('Dave private task');
      expect(ownerList).not.toContain('Hijacked');
      // The owner acts on anyone's task.
      expect(noticeOf(await owner.post(`/tasks/${daves.id}/done`, {}))).toContain('Done: Dave private task');
      const history = await db.query<{ actor: string; field: string }>(
        "SELECT actor, field FROM task_history WHERE task_id = $1 AND field = 'status'",
        [daves.id],
      );
      expect(history).toEqual([{ actor: 'user:local', field: 'status' }]);

      // No CSRF token, no action.
      const forged = await fetch(`${steward.url}/tasks/${later.id}/archive`, {
        method: 'POST',
        headers: { cookie: carol.cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: '',
        redirect: 'manual',
      });
      expect(forged.status).toBe(403);
      expect(ids(await (await carol.get('/tasks')).text())).toContain(later.id);
    });

    it('turns a skill off and on for one user, and shows its flags as a table', async () => {
      const db = steward.runtime.database;
      await ensureUser(db, 'gina');
      await ensureUser(db, 'hank');
      const run = (userId: string) => runAsCli(steward.runtime, userId, 'tasks.create --title "Buy stamps"');
      const gina = await loginAs(steward.url, (await createApiToken(db, 'gina')).token);
      const page = await (await gina.get('/skills')).text();
      const row = /<tr id="skill-tasks\.create"[\s\S]*?<\/form><\/td><\/tr>/.exec(page)?.[0] ?? '';
      expect(row).toContain('<code class="skill-name">tasks.<wbr>create</code>');
      expect(row).toContain('<table class="flags">');
      expect(row).toContain(
        '<tr><td><code>--title</code></td><td>Short title of the task</td><td>yes</td></tr>',
      );
      expect(row).toContain('<span class="badge on">on</span>');

      // Gina's own switch, whatever user the form names: Hank keeps the skill.
      const off = await gina.post('/skills/switch', { skill: 'tasks.create', enabled: 'no', user: 'hank' });
      expect(noticeOf(off)).toContain('tasks.create is off for gina');
      const refused = await run('gina');
      expect(refused.status).toBe('error');
      expect(refused.content).toContain('tasks.create is turned off for this user');
      expect(refused.callStatus).toBe('refused');
      expect((await run('hank')).status).toBe('ok');
      const after = await (await gina.get('/skills')).text();
      expect(/<tr id="skill-tasks\.create"[\s\S]*?<\/form><\/td><\/tr>/.exec(after)?.[0]).toContain(
        '<span class="badge off">off</span>',
      );
      expect(noticeOf(await gina.post('/skills/switch', { skill: 'no.such', enabled: 'no' }))).toContain(
        'No skill "no.such"',
      );

      // The owner switches anyone's: here Hank's off, then Gina's back on.
      const owner = await loginAs(steward.url, OWNER_TOKEN);
      expect(await (await owner.get('/skills?for=hank')).text()).toContain('<th>For hank</th>');
      await owner.post('/skills/switch', { skill: 'tasks.create', enabled: 'no', user: 'hank' });
      expect((await run('hank')).status).toBe('error');
      const on = await owner.post('/skills/switch', { skill: 'tasks.create', enabled: 'yes', user: 'gina' });
      expect(noticeOf(on)).toContain('tasks.create is on for gina.');
      expect((await run('gina')).status).toBe('ok');
      const forged = await fetch(`${steward.url}/skills/switch`, {
        method: 'POST',
        headers: { cookie: gina.cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ skill: 'tasks.create', enabled: 'no' }),
        redirect: 'manual',
      });
      expect(forged.status).toBe(403);
      expect((await run('gina')).status).toBe('ok');
    });

    it('charts cost and cached share per day and per model, on axes, each user their own', async () => {
      const db = steward.runtime.database;
      await ensureUser(db, 'ivy');
      const record = createDbUsageRecorder(db);
      const call = (model: string, prompt: number, cached: number, cost: number) =>
        record({
          userId: 'ivy',
          role: 'orchestrator',
          model,
          latencyMs: 100,
          usage: {
            promptTokens: prompt,
            cachedTokens: cached,
            cacheWriteTokens: 0,
            completionTokens: 10,
            cost,
          },
        });
      await call('model-big', 1000, 750, 0.02);
      await call('model-small', 1000, 0, 0.001);
      await call('model-big', 400, 100, 0.01);
      await db.query(
        "UPDATE llm_calls SET created_at = now() - interval '2 days' WHERE user_id = 'ivy' AND prompt_tokens = 400",
      );
      const ivy = await loginAs(steward.url, (await createApiToken(db, 'ivy')).token);
      const page = await (await ivy.get('/usage')).text();
      expect(page).toContain('Last 30 days: <strong>$0.0310</strong> in 3 model calls.');
      // Three days on the axis (the one in between had no calls), stacked by model.
      expect(page.match(/<g class="bar" data-label="\d\d-\d\d"/g)).toHaveLength(6);
      expect(page).toContain('<figcaption>Cost per day and model (USD)</figcaption>');
      expect(page).toMatch(/<ul class="legend"><li>.*model-big<\/li><li>.*model-small<\/li><\/ul>/);
      expect(page).toContain('text-anchor="end">$0.02</text>');
      expect(page).toContain('<td data-label="Cached">850 (61%)</td>');
      expect(page).toContain('<td data-label="Cached">0 (0%)</td>');
      expect(page).toMatch(/data-label="model-big" data-value="60\.7\d*"/);
      await ensureUser(db, 'jack');
      const other = await loginAs(steward.url, (await createApiToken(db, 'jack')).token);
      expect(await (await other.get('/usage')).text()).not.toContain('model-big');
    });

    it('tails the server log for the owner only, filtered by level, live', async () => {
      const owner = await loginAs(steward.url, OWNER_TOKEN);
      const all = await (await owner.get('/logs')).text();
      expect(all).toContain('Steward is listening');
      expect(all).toContain('request failed &lt;b&gt;');
      expect(all).toContain('<a href="/logs"');
      const warn = await (await owner.get('/logs?level=warn')).text();
      expect(warn).not.toContain('Steward is listening');
      expect(warn).toContain('slow disk</span> <span class="log-fields">path=/data</span>');
      expect(warn).toContain('request failed');

      await ensureUser(steward.runtime.database, 'kim');
      const kim = await loginAs(steward.url, (await createApiToken(steward.runtime.database, 'kim')).token);
      const refused = await kim.get('/logs');
      expect(refused.status).toBe(403);
      const refusedPage = await refused.text();
      expect(refusedPage).not.toContain('slow disk');
      expect(refusedPage).not.toContain('href="/logs"');
      expect((await kim.get('/logs/stream')).status).toBe(403);

      const stream = await fetch(`${steward.url}/logs/stream?level=error`, {
        headers: { cookie: owner.cookie },
      });
      expect(stream.headers.get('content-type')).toContain('text/event-stream');
      const reader = stream.body!.getReader();
      // Written after the stream opened: only the error line comes through.
      await new Promise((resolve) => setTimeout(resolve, 600));
      appendFileSync(
        logFile,
        logLine(30, 'an info line') + logLine(50, 'disk full', { err: { message: 'ENOSPC' } }),
      );
      let received = '';
      while (!received.includes('disk full')) {
        const { value, done } = await reader.read();
        if (done) break;
        received += new TextDecoder().decode(value);
      }
      await reader.cancel();
      expect(received).toContain('event: line');
      expect(received).toContain('"msg":"disk full"');
      expect(received).toContain('err=ENOSPC');
      expect(received).not.toContain('an info line');
    });

    it('answers a mistyped URL with a page to a browser and JSON to an API client', async () => {
      const browser = await fetch(`${steward.url}/taks`, {
        headers: { accept: 'text/html,application/xhtml+xml' },
      });
      expect(browser.status).toBe(404);
      expect(browser.headers.get('content-type')).toContain('text/html');
      const page = await browser.text();
      expect(page).toContain('<h1>Not found</h1>');
      expect(page).toContain('There is no page at <code>/taks</code>');
      expect(page).toContain('href="/login"');
      expect(browser.headers.get('content-security-policy')).toContain("default-src 'self'");
      const owner = await loginAs(steward.url, OWNER_TOKEN);
      const signedIn = await fetch(`${steward.url}/no/such/page`, {
        headers: { cookie: owner.cookie, accept: 'text/html' },
      });
      expect(signedIn.status).toBe(404);
      expect(await signedIn.text()).toContain('href="/tasks"');
      for (const [path, accept] of [
        ['/taks', 'application/json'],
        ['/taks', '*/*'],
        ['/api/nope', 'text/html'],
        ['/v1/nope', 'text/html'],
      ] as const) {
        const api = await fetch(`${steward.url}${path}`, { headers: { accept } });
        expect(api.status, `${path} ${accept}`).toBe(path === '/taks' ? 404 : 401);
        expect(api.headers.get('content-type'), path).toContain('application/json');
        if (api.status === 404) expect(await api.json()).toMatchObject({ error: 'not_found' });
      }
    });

    it('creates a schedule from a cron and a workflow, pauses, resumes and runs it, with each run’s output and delivery', async () => {
      const db = steward.runtime.database;
      await ensureUser(db, 'erin');
      await ensureUser(db, 'frank');
      const built = await runAsCli(
        steward.runtime,
        'erin',
        'workflow.build --name erin_digest --description "Digest for Erin" --steps "Use tasks.search to list open tasks"',
      );
      expect(built.status, built.content).toBe('ok');
      steward.runtime.skills.load();
      const erin = await loginAs(steward.url, (await createApiToken(db, 'erin')).token);
      const form = await (await erin.get('/schedules')).text();
      expect(form).toContain('<option value="erin_digest">');
      const badCron = await erin.post('/schedules/create', { workflow: 'erin_digest', cron: '0 25 * * *' });
      expect(noticeOf(badCron)).toContain('Not scheduled: cron "0 25 * * *"');
      const unknown = await erin.post('/schedules/create', { workflow: 'nope', cron: '0 9 * * *' });
      expect(noticeOf(unknown)).toContain('there is no workflow "nope"');
      const made = await erin.post('/schedules/create', {
        workflow: 'erin_digest',
        cron: '30 7 * * 1-5',
        timezone: 'Europe/Lisbon',
      });
      expect(noticeOf(made)).toContain('Saved workflows.erin_digest');
      let page = await (await erin.get('/schedules')).text();
      expect(page).toContain('data-schedule="workflows.erin_digest" data-paused="no"');
      expect(page).toContain('<code>30 7 * * 1-5</code> (Europe/Lisbon)');

      // Another user can neither see nor pause it.
      const frank = await loginAs(steward.url, (await createApiToken(db, 'frank')).token);
      expect(await (await frank.get('/schedules')).text()).not.toContain('erin_digest');
      expect(
        noticeOf(await frank.post('/schedules/pause', { name: 'workflows.erin_digest', user: 'erin' })),
      ).toContain('No such schedule.');

      const paused = await erin.post('/schedules/pause', { name: 'workflows.erin_digest', user: 'erin' });
      expect(noticeOf(paused)).toContain('Paused erin_digest');
      page = await (await erin.get('/schedules')).text();
      expect(page).toContain('data-paused="yes"');
      expect(page).toContain('>Resume<');
      const [view] = await steward.runtime.workflows.list('erin');
      expect(view).toMatchObject({ paused: true, next_run: null });
      expect(noticeOf(await erin.post('/schedules/resume', { name: 'workflows.erin_digest' }))).toContain(
        'Resumed erin_digest: it runs on "30 7 * * 1-5" again.',
      );
      expect((await steward.runtime.workflows.list('erin'))[0]).toMatchObject({ paused: false });

      fake.respondWith(() => ({ text: 'Erin, nothing is open today.' }));
      const started = await erin.post('/schedules/run', { name: 'workflows.erin_digest' });
      expect(noticeOf(started)).toContain('Started erin_digest');
      await expect
        .poll(async () => (await (await erin.get('/schedules')).text()).includes('data-run-status="ok"'), {
          timeout: 60_000,
        })
        .toBe(true);
      page = await (await erin.get('/schedules')).text();
      expect(page).toContain('Erin, nothing is open today.');
      expect(page).toMatch(/Delivery: (delivered|pending)/);
      expect(page).toMatch(/<a href="\/turns\/[\w-]+">trace<\/a>/);
    });
  });
}
