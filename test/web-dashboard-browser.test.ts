import { appendFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDbUsageRecorder } from '../src/llm/index.ts';
import { createTask } from '../src/tasks/index.ts';
import { dispatch, getResults, reply, run, scriptModels } from './support/agent-scripts.ts';
import { sharedChromium } from './support/chromium.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { runAsCli } from './support/steward.ts';
import { OWNER_TOKEN, ownerTaskContext, startWebSteward, type WebSteward } from './support/web.ts';

/*
 * The dashboard's actions in Debian's Chromium, at 1280 and 390 px: tasks marked done, filtered,
 * edited and archived; a schedule created, paused, resumed and run; a skill switched off with its
 * flags in a table; usage charts; the live log; a turn's timeline on a phone; the chat streaming
 * a reply and `/new` clearing it; a mistyped URL. Screenshots go to SHOTS (default /tmp/shots).
 */

const SHOTS = process.env.SHOTS ?? path.join(os.tmpdir(), 'shots');
const WIDTHS = [1280, 390] as const;
const LONG_COMMAND =
  'tasks.search --query "quarterly report for the northern region" --status todo --priority high --sort due_date';

let fake: FakeLlm;
let steward: WebSteward;
/** One context (the owner logged in) and one tab for the file: a new tab starts a renderer, seconds of a loaded machine. */
let context: BrowserContext;
let page: Page;
const logFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'steward-browser-logs-')), 'steward.log');
const problems: string[] = [];
const logLine = (level: number, msg: string, fields: Record<string, unknown> = {}) =>
  `${JSON.stringify({ level, time: Date.now(), pid: 1, hostname: 'h', msg, ...fields })}\n`;

function watch(page: Page): Page {
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      problems.push(`${page.url()}: console error: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`${page.url()}: page error: ${error.message}`));
  return page;
}

async function shoot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<void> {
  await page.bringToFront();
  await page.screenshot({
    path: path.join(SHOTS, `${name}.png`),
    fullPage: options.fullPage ?? true,
    animations: 'disabled',
  });
}

/** The tab `width` px wide on `route`, still logged in (not sent to /login). */
async function open(width: number, route: string): Promise<Response | null> {
  await page.setViewportSize({ width, height: 844 });
  const response = await page.goto(`${steward.url}${route}`);
  expect(new URL(page.url()).pathname).not.toBe('/login');
  return response;
}

/** How far the page scrolls sideways (0: it fits). */
const sideways = (page: Page) =>
  page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  writeFileSync(
    logFile,
    logLine(30, 'Steward is listening', { url: 'http://127.0.0.1:8080' }) +
      logLine(40, 'telegram webhook answered slowly', { ms: 2400 }) +
      logLine(50, 'request failed', { path: '/api/chat', err: { message: 'ECONNREFUSED 127.0.0.1:4999' } }),
  );
  fake = await startFakeLlm();
  steward = await startWebSteward('pglite', fake, { logFile });
  // Logged in once through the form (test/web-browser.test.ts tests logging in).
  context = await (await sharedChromium()).newContext({ viewport: { width: 1280, height: 844 } });
  page = watch(await context.newPage());
  await page.goto(`${steward.url}/login`);
  await page.fill('input[name="token"]', OWNER_TOKEN);
  await page.click('button[type="submit"]');
  await page.waitForURL('**/chat');
  const db = steward.runtime.database;
  const ctx = ownerTaskContext(db);
  const today = new Date().toISOString().slice(0, 10);
  for (const task of [
    { title: 'Renew the passport before the summer trip', priority: 'high' as const, dueDate: today },
    { title: 'Call the plumber about the kitchen sink', priority: 'medium' as const },
    { title: 'File the quarterly VAT return', priority: 'critical' as const, dueDate: '2020-03-31' },
    { title: 'Buy a birthday present for Sam', priority: 'low' as const },
  ]) {
    const created = await createTask(ctx, task);
    if (!created.ok) throw new Error(created.message);
  }
  const built = await runAsCli(
    steward.runtime,
    'local',
    'workflow.build --name morning_brief --description "Brief me on open tasks every morning" --steps "Use tasks.search to list open tasks and summarise them"',
  );
  if (built.status !== 'ok') throw new Error(built.content);
  steward.runtime.skills.load();
  const record = createDbUsageRecorder(db);
  for (const [model, prompt, cached, cost] of [
    ['openai/gpt-5-mini', 12_000, 9_000, 0.0132],
    ['anthropic/claude-haiku-4.5', 4_000, 1_000, 0.0061],
    ['openai/gpt-5-mini', 3_000, 0, 0.0049],
  ] as const) {
    await record({
      userId: 'local',
      role: 'orchestrator',
      model,
      latencyMs: 900,
      usage: { promptTokens: prompt, cachedTokens: cached, cacheWriteTokens: 0, completionTokens: 300, cost },
    });
  }
}, 20 * 60_000);

afterAll(async () => {
  await context?.close();
  await steward?.stop();
  await fake?.close();
});

describe('the dashboard acts, in Chromium', { timeout: 300_000 }, () => {
  it('tasks: a Mark done button per open task, filters, edit and archive', async () => {
    await open(1280, '/tasks');
    const todo = page.locator('li.task[data-status="todo"]');
    expect(await todo.count()).toBe(4);
    expect(await page.getByRole('button', { name: 'Mark done' }).count()).toBe(4);
    await shoot(page, 'tasks-1280');

    await todo.filter({ hasText: 'Call the plumber' }).getByRole('button', { name: 'Mark done' }).click();
    await page.waitForURL('**/tasks?notice=*');
    expect(await page.locator('.notice').textContent()).toContain(
      'Done: Call the plumber about the kitchen sink.',
    );
    expect(await page.getByRole('button', { name: 'Mark done' }).count()).toBe(3);
    expect(await page.locator('li.task[data-status="done"]').textContent()).toContain('Call the plumber');

    await page.selectOption('select[name="due"]', 'overdue');
    await page.click('form.filters button[type="submit"]');
    await page.waitForURL('**/tasks?*due=overdue*');
    expect(await page.locator('li.task .task-title').allTextContents()).toEqual([
      'File the quarterly VAT return',
    ]);

    const vat = page.locator('li.task', { hasText: 'VAT' });
    await vat.locator('summary', { hasText: 'Edit' }).click();
    await vat.locator('input[name="title"]').fill('File the Q1 VAT return');
    await vat.locator('input[name="due_date"]').fill('2030-04-30');
    await vat.locator('select[name="priority"]').selectOption('high');
    await vat.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL('**/tasks?*notice=*');
    // The filter is kept: the task is no longer overdue, so it left this list.
    expect(new URL(page.url()).searchParams.get('due')).toBe('overdue');
    expect(await page.locator('.notice').textContent()).toBe('Saved title, priority, due date.');
    await page.goto(`${steward.url}/tasks?priority=high`);
    expect(await page.locator('li.task .task-title').allTextContents()).toEqual(
      expect.arrayContaining(['File the Q1 VAT return', 'Renew the passport before the summer trip']),
    );
    await page.locator('li.task', { hasText: 'Sam' }).count();
    await page.goto(`${steward.url}/tasks`);
    await page
      .locator('li.task', { hasText: 'Buy a birthday present' })
      .getByRole('button', { name: 'Archive' })
      .click();
    await page.waitForURL('**/tasks?notice=*');
    expect(await page.locator('li.task', { hasText: 'Buy a birthday present' }).count()).toBe(0);
    await shoot(page, 'tasks-acted-1280');

    await open(390, '/tasks');
    await page.locator('li.task').first().locator('summary', { hasText: 'Edit' }).click();
    expect(await sideways(page)).toBeLessThanOrEqual(1);
    await shoot(page, 'tasks-390');
    expect(problems).toEqual([]);
  });

  it('schedules: created from a cron and a workflow, paused, resumed and run, with the run’s output', async () => {
    await open(1280, '/schedules');
    await page.selectOption('select[name="workflow"]', 'morning_brief');
    await page.fill('input[name="cron"]', '0 25 * * *');
    await page.getByRole('button', { name: 'Schedule' }).click();
    await page.waitForURL('**/schedules?notice=*');
    expect(await page.locator('.notice').textContent()).toContain('hour 25 is out of range');
    await page.selectOption('select[name="workflow"]', 'morning_brief');
    await page.fill('input[name="cron"]', '0 8 * * 1-5');
    await page.fill('input[name="timezone"]', 'Europe/Berlin');
    await page.getByRole('button', { name: 'Schedule' }).click();
    await page.waitForURL('**/schedules?notice=*');
    expect(await page.locator('.notice').textContent()).toContain('Saved workflows.morning_brief');
    const card = page.locator('li.schedule[data-schedule="workflows.morning_brief"]');
    expect(await card.textContent()).toContain('0 8 * * 1-5');

    await card.getByRole('button', { name: 'Pause' }).click();
    await page.waitForURL('**/schedules?notice=*');
    expect(await card.getAttribute('data-paused')).toBe('yes');
    expect(await card.locator('.badge.paused').textContent()).toBe('paused');
    await card.getByRole('button', { name: 'Resume' }).click();
    await page.waitForURL('**/schedules?notice=*');
    expect(await card.getAttribute('data-paused')).toBe('no');

    fake.respondWith(() => ({
      text: 'Good morning. Three open tasks: the passport (due today), the VAT return and the plumber.',
    }));
    await card.getByRole('button', { name: 'Run now' }).click();
    await page.waitForURL('**/schedules?notice=*');
    // The run finishes in the background: the page is asked for (not drawn) until it has, then drawn once.
    await expect
      .poll(async () => (await page.request.get(`${steward.url}/schedules`)).text(), { timeout: 60_000 })
      .toContain('data-run-status="ok"');
    await page.reload();
    expect(await page.locator('[data-run-status="ok"]').count()).toBe(1);
    fake.respondWith(null);
    await card.locator('details.runs summary').click();
    expect(await card.locator('pre.output').textContent()).toContain('Good morning. Three open tasks');
    expect(await card.locator('.run-list').textContent()).toMatch(/Delivery: (delivered|pending)/);
    await shoot(page, 'schedules-1280');

    await open(390, '/schedules');
    await page.locator('details.runs summary').first().click();
    expect(await sideways(page)).toBeLessThanOrEqual(1);
    await shoot(page, 'schedules-390');
    expect(problems).toEqual([]);
  });

  it('skills: switched off for a user, flags as a table, names unbroken', async () => {
    for (const width of WIDTHS) {
      await open(width, '/skills');
      const row = page.locator('tr#skill-tasks\\.create');
      await row.locator('summary').click();
      const flags = row.locator('table.flags');
      await flags.waitFor();
      expect(await flags.locator('tbody tr').first().textContent()).toBe('--titleShort title of the taskyes');
      // No skill name breaks inside a word: each piece between dots and underscores is on one line.
      const broken = await page.evaluate<string[]>(`(() => {
        const out = [];
        for (const code of document.querySelectorAll('code.skill-name')) {
          for (const node of code.childNodes) {
            if (node.nodeType !== 3 || !node.textContent) continue;
            const range = document.createRange();
            range.selectNodeContents(node);
            const lines = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top)));
            if (lines.size > 1) out.push(code.textContent);
          }
        }
        return out;
      })()`);
      expect(broken, `at ${width} px`).toEqual([]);
      expect(await sideways(page)).toBeLessThanOrEqual(1);
      await shoot(page, `skills-${width}`);
      // The long page in full is too small to judge: the open skill, as the screen shows it.
      await row.evaluate((node) => node.scrollIntoView({ block: 'start' }));
      await shoot(page, `skills-open-${width}`, { fullPage: false });
      if (width === 1280) {
        await row.getByRole('button', { name: 'Turn off tasks.create for local' }).click();
        await page.waitForURL('**/skills?*notice=*');
        expect(await page.locator('.notice').textContent()).toContain('tasks.create is off for local');
        expect(await page.locator('tr#skill-tasks\\.create .badge.off').textContent()).toBe('off');
        const refused = await runAsCli(steward.runtime, 'local', 'tasks.create --title "Should not exist"');
        expect(refused.content).toContain('turned off');
        await page
          .locator('tr#skill-tasks\\.create')
          .getByRole('button', { name: 'Turn on tasks.create for local' })
          .click();
        await page.waitForURL('**/skills?*notice=*');
        expect(await page.locator('tr#skill-tasks\\.create .badge.on').textContent()).toBe('on');
      }
    }
    expect(problems).toEqual([]);
  });

  it('usage: charts with axes and values for a single day, per model', async () => {
    for (const width of WIDTHS) {
      await open(width, '/usage');
      const charts = page.locator('figure.chart');
      expect(await charts.count()).toBe(4);
      const cost = charts.first();
      expect((await cost.locator('g.tick text').allTextContents()).slice(0, 3)).toEqual([
        '$0',
        '$0.01',
        '$0.02',
      ]);
      const bar = cost.locator('g.bar');
      expect(await bar.count()).toBe(1);
      expect(await bar.locator('text.value').textContent()).toMatch(/^\$0\.02\d\d$/);
      const box = await bar.locator('rect').first().boundingBox();
      expect(box!.width).toBeLessThan(60);
      expect((await cost.locator('.legend li').allTextContents()).slice(0, 2)).toEqual([
        ' openai/gpt-5-mini',
        ' anthropic/claude-haiku-4.5',
      ]);
      expect(
        await page.locator('tr[data-model="openai/gpt-5-mini"] td[data-label="Cached"]').textContent(),
      ).toBe('9000 (60%)');
      expect(await sideways(page)).toBeLessThanOrEqual(1);
      await shoot(page, `usage-${width}`);
    }
    expect(problems).toEqual([]);
  });

  it('logs: the owner’s live tail, filtered by level', async () => {
    for (const width of WIDTHS) {
      await open(width, '/logs');
      expect(await page.locator('#log-lines li').count()).toBeGreaterThanOrEqual(3);
      await page.locator('#log-live', { hasText: /^Live/ }).waitFor();
      appendFileSync(logFile, logLine(40, `live line at ${width}`, { channel: 'telegram' }));
      await page.locator('#log-lines li', { hasText: `live line at ${width}` }).waitFor({ timeout: 15_000 });
      await page.selectOption('#log-level', 'error');
      await page.waitForURL('**/logs?level=error');
      expect(await page.locator('#log-lines li').allTextContents()).toEqual(
        expect.arrayContaining([expect.stringContaining('request failed')]),
      );
      expect(new Set(await page.locator('#log-lines li .badge').allTextContents())).toEqual(
        new Set(['error']),
      );
      appendFileSync(logFile, logLine(30, `quiet info at ${width}`) + logLine(50, `live error at ${width}`));
      await page.locator('#log-lines li', { hasText: `live error at ${width}` }).waitFor({ timeout: 15_000 });
      expect(await page.locator('#log-lines li', { hasText: `quiet info at ${width}` }).count()).toBe(0);
      await page.goto(`${steward.url}/logs?level=info`);
      expect(await sideways(page)).toBeLessThanOrEqual(1);
      await shoot(page, `logs-${width}`);
    }
    expect(problems).toEqual([]);
  });

  it('chat streams the reply in place, /new clears the view; the turn reads at 390 px', async () => {
    await open(1280, '/chat');
    const models = scriptModels(fake, {
      orchestrator: [
        dispatch(
          { agent_id: 'finder', mission: 'Find the open report tasks', skills: ['tasks.search'] },
          { agent_id: 'counter', mission: 'Count the open tasks', skills: ['tasks.search'] },
          {
            agent_id: 'writer',
            mission: 'Write the answer',
            skills: ['tasks.search'],
            depends_on: ['finder', 'counter'],
          },
        ),
        getResults(),
        reply(
          'Here is your plan for today: first the passport, then the VAT return, and the plumber can wait until tomorrow afternoon.',
          { chunkDelayMs: 50 },
        ),
      ],
      agents: {
        finder: [run(LONG_COMMAND), reply('No report tasks.')],
        counter: [run('tasks.search --status todo'), reply('Three open tasks.')],
        writer: [reply('Written.')],
      },
    });
    // Part of the reply is on the page while the rest is still coming: the page notes the first
    // such state itself, at every change of the list, so none between two chunks is missed.
    await page.evaluate(`(() => {
      window.__partial = '';
      new MutationObserver(() => {
        const text = document.querySelector('[data-role="reply"].streaming')?.textContent ?? '';
        if (!window.__partial && text.includes('Here is your plan') && !text.includes('tomorrow afternoon'))
          window.__partial = text;
      }).observe(document.getElementById('messages'), { childList: true, subtree: true, characterData: true });
    })()`);
    await page.fill('textarea[name="text"]', 'Plan my day');
    await page.press('textarea[name="text"]', 'Enter');
    const streaming = page.locator('[data-role="reply"].streaming');
    // A function, not a string: the dashboard's CSP forbids eval.
    await page.waitForFunction(() => (globalThis as { __partial?: string }).__partial, undefined, {
      timeout: 60_000,
    });
    await shoot(page, 'chat-streaming-1280');
    await streaming.waitFor({ state: 'detached', timeout: 60_000 });
    expect(await page.evaluate('window.__partial')).toContain('Here is your plan');
    const href = await page.locator('[data-role="reply"]').last().locator('a.trace').getAttribute('href');
    models.assertDone();
    fake.reset();

    await page.fill('textarea[name="text"]', '/new');
    await page.press('textarea[name="text"]', 'Enter');
    await expect.poll(() => page.locator('#messages li').count(), { timeout: 15_000 }).toBe(1);
    expect(await page.locator('#messages li').textContent()).toContain('Started a new conversation.');
    await page.reload();
    expect(await page.locator('#messages li').count()).toBe(0);

    for (const width of WIDTHS) {
      await open(width, href!);
      await page.waitForSelector('[data-turn-status="completed"]');
      const command = page.locator('#timeline tr.skill code', { hasText: 'quarterly report' });
      const box = await command.boundingBox();
      // The command reads as text: its box is wide, not a column a few characters across.
      expect(box!.width, `at ${width} px`).toBeGreaterThan(250);
      const hidden = await page.evaluate<number>(`(() => {
        const scroller = document.querySelector('table.timeline').parentElement;
        return scroller.scrollWidth - scroller.clientWidth;
      })()`);
      expect(hidden, `timeline columns behind a scroll at ${width} px`).toBeLessThanOrEqual(1);
      for (const wave of await page.locator('.wave').all()) {
        const waveBox = await wave.boundingBox();
        expect(waveBox!.x + waveBox!.width, `a wave off screen at ${width} px`).toBeLessThanOrEqual(width);
      }
      expect(await sideways(page)).toBeLessThanOrEqual(1);
      await shoot(page, `turn-${width}`);
    }
    expect(problems).toEqual([]);
  });

  it('shows a page for a mistyped URL', async () => {
    for (const width of WIDTHS) {
      const response = await open(width, '/taks');
      expect(response?.status()).toBe(404);
      expect(await page.locator('h1').textContent()).toBe('Not found');
      expect(await page.locator('nav a[href="/tasks"]').count()).toBe(1);
      await shoot(page, `not-found-${width}`);
    }
  });
});
