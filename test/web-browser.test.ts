import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saveMemory } from '../src/memory/index.ts';
import { createTask } from '../src/tasks/index.ts';
import { approve, dispatch, getResults, reply, run, scriptModels, slow } from './support/agent-scripts.ts';
import { sharedChromium } from './support/chromium.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { OWNER_TOKEN, ownerTaskContext, startWebSteward, type WebSteward } from './support/web.ts';

/*
 * The dashboard in Debian's Chromium (playwright-core): log in, chat with the reply streamed in
 * place, follow the turn live on its trace page, visit every page at desktop and phone width
 * with screenshots in test/artifacts/, no console errors, keyboard navigation, and `<script>`
 * sent through chat, skill results and task titles shown as text.
 */

const ARTIFACTS = fileURLToPath(new URL('./artifacts/', import.meta.url));
const PAGES = ['/chat', '/turns', '/skills', '/tasks', '/memories', '/schedules', '/channels', '/usage'];
const XSS = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 1">';

let fake: FakeLlm;
let steward: WebSteward;
/** One context and tab for the file (a new tab starts a renderer: seconds of a loaded machine). */
let context: BrowserContext;
let page: Page;
const problems: string[] = [];
/** Set while a page is loaded that answers 401/404 on purpose (Chromium logs that as a console error). */
let expectingErrorStatus = false;

function watch(page: Page): Page {
  page.on('console', (message) => {
    if (expectingErrorStatus && message.text().startsWith('Failed to load resource')) return;
    if (message.type() === 'error') problems.push(`${page.url()}: console error: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`${page.url()}: page error: ${error.message}`));
  page.on('dialog', (dialog) => {
    problems.push(`${page.url()}: a dialog opened: ${dialog.message()}`);
    void dialog.dismiss();
  });
  return page;
}

async function shoot(page: Page, name: string, options: { bestEffort?: boolean } = {}): Promise<void> {
  // A background tab does not paint: bring the page forward first.
  await page.bringToFront();
  const taken = page.screenshot({
    path: path.join(ARTIFACTS, `${name}.png`),
    fullPage: true,
    animations: 'disabled',
    timeout: options.bestEffort ? 15_000 : 90_000,
  });
  // A picture of a moment mid-turn may miss its moment on a loaded machine; that is no failure.
  if (options.bestEffort) await taken.catch(() => undefined);
  else await taken;
}

/** Empties the cookie jar (logged out) and sizes the tab `width` × `height`. */
async function freshTab(width: number, height: number): Promise<void> {
  await context.clearCookies();
  await page.setViewportSize({ width, height });
}

beforeAll(async () => {
  context = await (await sharedChromium()).newContext({ viewport: { width: 1280, height: 900 } });
  page = watch(await context.newPage());
  mkdirSync(ARTIFACTS, { recursive: true });
  fake = await startFakeLlm();
  steward = await startWebSteward('pglite', fake);
  const db = steward.runtime.database;
  const ctx = ownerTaskContext(db);
  await createTask(ctx, { title: `Seeded task ${XSS}` });
  await createTask(ctx, { title: 'Renew the passport', priority: 'high' });
  await saveMemory(db, 'local', {
    content: `Prefers oat milk ${XSS}`,
    category: 'preference',
    importance: 0.8,
  });
}, 20 * 60_000);

afterAll(async () => {
  await context?.close();
  await steward?.stop();
  await fake?.close();
});

describe('the dashboard in Chromium', { timeout: 300_000 }, () => {
  it('logs in, streams a chat reply in place, and shows the turn live with its DAG', async () => {
    await freshTab(1280, 900);
    await page.goto(`${steward.url}/`);
    expect(new URL(page.url()).pathname).toBe('/login');
    await shoot(page, 'login');
    expectingErrorStatus = true;
    await page.fill('input[name="token"]', 'wrong-token');
    await page.press('input[name="token"]', 'Enter');
    await page.waitForSelector('.error');
    expectingErrorStatus = false;
    expect(await page.textContent('.error')).toContain('not valid');
    await page.fill('input[name="token"]', OWNER_TOKEN);
    await page.press('input[name="token"]', 'Enter');
    await page.waitForURL('**/chat');

    const models = scriptModels(fake, {
      orchestrator: [
        dispatch(
          { agent_id: 'finder', mission: 'Find open tasks', skills: ['tasks.search'] },
          { agent_id: 'maker', mission: 'Create the task', skills: ['tasks.create'] },
          {
            agent_id: 'writer',
            mission: 'Write the summary',
            skills: ['tasks.search'],
            depends_on: ['finder', 'maker'],
          },
        ),
        getResults(),
        reply(`All **done**. ${XSS}`, { chunkDelayMs: 20 }),
      ],
      agents: {
        finder: [slow(5000, run('tasks.search')), reply('Two open tasks.')],
        maker: [run(`tasks.create --title "Evil ${XSS.replaceAll('"', "'")}"`), reply('Created.')],
        writer: [reply('Summary written.')],
      },
      sentinel: [approve()],
    });
    await page.fill('textarea[name="text"]', `Plan my day ${XSS}`);
    await page.press('textarea[name="text"]', 'Enter');
    const user = page.locator('[data-role="user"]').last();
    expect(await user.textContent()).toContain('<script>window.__pwned');
    const link = page.locator('[data-role="reply"]').last().locator('a.trace');
    await link.waitFor();
    const href = await link.getAttribute('href');
    expect(href).toMatch(/^\/turns\/[\w-]+$/);

    // The trace page, opened while the turn runs, fills in live.
    const trace = watch(await context.newPage());
    await trace.goto(`${steward.url}${href}`);
    await trace.waitForSelector('[data-agent-id="finder"][data-status="running"]', { timeout: 15_000 });
    // Not yet started, so not in the stored trace: it came over the event stream.
    await trace.waitForSelector('[data-agent-id="writer"][data-status="pending"]', { timeout: 5_000 });
    // What the page showed from the database is not added again by the stream's replay.
    expect(await trace.locator('#timeline tr.skill', { hasText: 'tasks.create' }).count()).toBe(1);
    expect(await trace.locator('[data-agent-id="maker"] [data-field="calls"] li').count()).toBe(1);
    await shoot(trace, 'turn-live', { bestEffort: true });
    await trace.waitForSelector('[data-agent-id="writer"][data-status="done"]', { timeout: 30_000 });
    // At the turn's end the page reloads the stored trace.
    await trace.waitForSelector('[data-turn-status="completed"]', { timeout: 30_000 });
    await trace.waitForLoadState('load');
    const agents = await trace.$$eval('[data-agent-id]', (nodes) =>
      nodes.map((node) => ({
        id: node.getAttribute('data-agent-id'),
        dependsOn: node.getAttribute('data-depends-on'),
        status: node.getAttribute('data-status'),
      })),
    );
    expect(agents.sort((a, b) => String(a.id).localeCompare(String(b.id)))).toEqual([
      { id: 'finder', dependsOn: '', status: 'done' },
      { id: 'maker', dependsOn: '', status: 'done' },
      { id: 'writer', dependsOn: 'finder maker', status: 'done' },
    ]);
    expect(await trace.locator('#timeline').textContent()).toContain('<script>window.__pwned');
    await shoot(trace, 'turn');

    const finalReply = page.locator('[data-role="reply"]').last();
    await finalReply.locator('strong').waitFor();
    expect(await finalReply.textContent()).toContain('<script>window.__pwned');
    expect(await finalReply.locator('a.trace').getAttribute('href')).toBe(href);
    await shoot(page, 'chat');
    models.assertDone();
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    expect(await trace.evaluate('window.__pwned')).toBeUndefined();
    await trace.close();
    expect(problems).toEqual([]);
  });

  it('renders every page at desktop and 390 px wide, without console errors or script injection', async () => {
    await freshTab(1280, 844);
    await page.goto(`${steward.url}/login`);
    await page.fill('input[name="token"]', OWNER_TOKEN);
    await page.click('button[type="submit"]');
    await page.waitForURL('**/chat');
    for (const [width, suffix] of [
      [1280, 'desktop'],
      [390, 'phone'],
    ] as const) {
      await page.setViewportSize({ width, height: 844 });
      for (const route of PAGES) {
        const response = await page.goto(`${steward.url}${route}`);
        expect(response?.status(), route).toBe(200);
        expect(await page.locator('h1').count(), route).toBe(1);
        await shoot(page, `${route.slice(1)}-${suffix}`);
        const overflow = await page.evaluate<number>(
          'document.documentElement.scrollWidth - window.innerWidth',
        );
        expect(overflow, `${route} at ${width} px scrolls sideways`).toBeLessThanOrEqual(1);
        expect(await page.evaluate('window.__pwned'), route).toBeUndefined();
      }
      expect(await page.goto(`${steward.url}/tasks`).then(() => page.content())).toContain(
        'Seeded task &lt;script&gt;',
      );
      expectingErrorStatus = true;
      const missing = await page.goto(`${steward.url}/turns/no-such-turn`);
      expect(missing?.status()).toBe(404);
      await shoot(page, `turn-missing-${suffix}`);
      expectingErrorStatus = false;
    }
    expect(problems).toEqual([]);
  });

  it('is usable from the keyboard', async () => {
    await freshTab(1280, 900);
    await page.goto(`${steward.url}/login`);
    // The token field takes the focus by itself (autofocus); typing waits for it, not a fixed time.
    await expect
      .poll(() => page.evaluate<string | undefined>('document.activeElement?.id'), { timeout: 10_000 })
      .toBe('token');
    await page.keyboard.type(OWNER_TOKEN);
    await page.keyboard.press('Enter');
    await page.waitForURL('**/chat');
    await page.goto(`${steward.url}/tasks`);
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string | undefined>('document.activeElement?.textContent')).toBe(
      'Skip to content',
    );
    let found = false;
    for (let i = 0; i < 20 && !found; i++) {
      await page.keyboard.press('Tab');
      found = (await page.evaluate<string | undefined>('document.activeElement?.textContent')) === 'Memories';
    }
    expect(found).toBe(true);
    await page.keyboard.press('Enter');
    await page.waitForURL('**/memories');
    // Search, then forget a memory, all from the keyboard.
    await page.focus('#q');
    await page.keyboard.type('oat');
    await page.keyboard.press('Enter');
    await page.waitForURL('**/memories?q=oat');
    expect(await page.locator('[data-memory-id]').count()).toBe(1);
    await page.locator('button.danger').first().focus();
    await page.keyboard.press('Enter');
    await page.waitForURL('**/memories?notice=*');
    expect(await page.locator('.notice').textContent()).toBe('Forgotten.');
    expect(await page.locator('[data-memory-id]').count()).toBe(0);
    expect(problems).toEqual([]);
  });
});
