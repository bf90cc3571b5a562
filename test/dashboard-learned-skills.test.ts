import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LearnedActor, type LearnedSkills, learnedSkillsFor } from '../src/skills/index.ts';
import { createApiToken, ensureUser } from '../src/users/index.ts';
import { sharedChromium } from './support/chromium.ts';
import { backends } from './support/db.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { loginAs, OWNER_TOKEN, startWebSteward, type WebSteward } from './support/web.ts';

/*
 * The dashboard's Skills page for learned skills: use counts, the history of each with its
 * diffs, rollback (a new version), retired skills and restoring them, per-user visibility,
 * and one rollback clicked in Chromium.
 */

const SKILL = 'travel.plan';
const body = (step: string) =>
  `## Usage\n\n${SKILL} [--city <name>]\n\n## Flags\n\n--city  Destination\n\n## Behavior\n\n1. ${step}`;

for (const backend of backends()) {
  describe(`dashboard: learned skills [${backend}]`, () => {
    let fake: FakeLlm;
    let steward: WebSteward;
    let learned: LearnedSkills;
    let file: string;
    const actor = (): LearnedActor => ({
      userId: 'local',
      author: 'steward',
      turnId: 'turn-1',
      at: new Date(),
    });

    beforeAll(async () => {
      fake = await startFakeLlm();
      steward = await startWebSteward(backend, fake);
      learned = learnedSkillsFor(steward.runtime.services)!;
      file = path.join(steward.config.skillsDir, 'travel', 'plan.md');
      expect(
        await learned.write(actor(), {
          name: SKILL,
          description: 'Lisbon trip checklist',
          body: body('List trip tasks with tasks.search --query trip.'),
        }),
      ).toMatchObject({ ok: true });
      expect(
        await learned.update(actor(), {
          name: SKILL,
          body: body('List open trip tasks with tasks.search --query trip --status todo.'),
          reason: 'only open tasks',
        }),
      ).toMatchObject({ ok: true });
      const ran = await steward.runtime.executor.execute({
        command: SKILL,
        caller: { kind: 'cli' },
        user: { id: 'local', timezone: 'UTC' },
        channel: 'cli',
        confirmed: true,
      });
      expect(ran.status, ran.content).toBe('ok');
    }, 180_000);
    afterAll(async () => {
      await steward?.stop();
      await fake?.close();
    }, 120_000);

    it('lists the learned skill with its use and a link to its history', async () => {
      const owner = await loginAs(steward.url, OWNER_TOKEN);
      const html = await (await owner.get('/skills')).text();
      const row = /<tr id="skill-travel\.plan"[\s\S]*?<\/form><\/td><\/tr>/.exec(html)?.[0] ?? '';
      expect(row).toContain('learned · version 2 · history');
      expect(row).toContain('href="/skills/history?name=travel.plan&amp;owner=local"');
      expect(row).toMatch(
        /<td class="runs">1<\/td><td class="failures">0<\/td>\s*<td>\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC<\/td>/,
      );
      const unused = /<tr id="skill-tasks\.delete"[\s\S]*?<\/form><\/td><\/tr>/.exec(html)?.[0] ?? '';
      expect(unused).toContain('<td class="runs">0</td>');
      expect(unused).toContain('never');
    });

    it('shows every version with its diff, and rolls back to one as a new version', async () => {
      const owner = await loginAs(steward.url, OWNER_TOKEN);
      const page = await (await owner.get(`/skills/history?name=${SKILL}&owner=local`)).text();
      expect(page).toContain('only open tasks');
      expect(page).toContain('+1. List open trip tasks with tasks.search --query trip --status todo.');
      expect(page).toContain('Roll back to 1');
      expect(page).not.toContain('Roll back to 2');

      const stale = await fetch(`${steward.url}/skills/rollback`, {
        method: 'POST',
        headers: { cookie: owner.cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ name: SKILL, owner: 'local', to: '1' }),
        redirect: 'manual',
      });
      expect(stale.status).toBe(403);
      expect(await learned.history('local', SKILL)).toHaveLength(2);

      const posted = await owner.post('/skills/rollback', { name: SKILL, owner: 'local', to: '1' });
      expect(posted.status).toBe(303);
      const location = posted.headers.get('location') ?? '';
      expect(decodeURIComponent(location)).toContain(
        'Rolled back to version 1: travel.plan is now version 3.',
      );
      const versions = await learned.history('local', SKILL);
      expect(versions.map(({ version, author, reason }) => [version, author, reason])).toEqual([
        [1, 'steward', 'learned in a conversation'],
        [2, 'steward', 'only open tasks'],
        [3, 'local', 'rolled back to version 1'],
      ]);
      expect(readFileSync(file, 'utf8')).toBe(versions[0]!.content);
      const after = await (await owner.get(location)).text();
      expect(after).toContain('Rolled back to version 1');
      expect(after).toContain('Roll back to 2');
    });

    it("keeps another user's skill and its history out of reach", async () => {
      await ensureUser(steward.runtime.database, 'bob');
      const bob = await loginAs(steward.url, (await createApiToken(steward.runtime.database, 'bob')).token);
      const list = await (await bob.get('/skills')).text();
      expect(list).not.toContain('id="skill-travel.plan"');
      expect(list).not.toContain('Lisbon trip checklist');
      expect(list).not.toContain('/skills/history?name=travel.plan');
      const history = await bob.get(`/skills/history?name=${SKILL}&owner=local`);
      expect(history.status).toBe(404);
      expect(await history.text()).not.toContain('only open tasks');
      const before = readFileSync(file, 'utf8');
      const posted = await bob.post('/skills/rollback', { name: SKILL, owner: 'local', to: '2' });
      expect(decodeURIComponent(posted.headers.get('location') ?? '')).toContain('Not rolled back');
      expect(readFileSync(file, 'utf8')).toBe(before);
      expect(await learned.history('local', SKILL)).toHaveLength(3);
    });

    it('lists a retired skill, and restores it from its history', async () => {
      expect(await learned.retire(actor(), { name: SKILL, reason: 'trip season is over' })).toMatchObject({
        ok: true,
      });
      const owner = await loginAs(steward.url, OWNER_TOKEN);
      const list = await (await owner.get('/skills')).text();
      expect(list).not.toContain('id="skill-travel.plan"');
      expect(list).toContain('Retired learned skills');
      expect(list).toContain('trip season is over');
      const page = await (await owner.get(`/skills/history?name=${SKILL}&owner=local`)).text();
      expect(page).toContain('retired');
      expect(page).not.toContain('Roll back to 4');
      const posted = await owner.post('/skills/rollback', { name: SKILL, owner: 'local', to: '2' });
      expect(decodeURIComponent(posted.headers.get('location') ?? '')).toContain('is now version 5');
      expect(steward.runtime.skills.snapshot().skills.get(SKILL)?.body).toContain('--status todo');
    });

    it.runIf(backend === 'pglite')('rolls back with a click in Chromium', { timeout: 180_000 }, async () => {
      const context = await (await sharedChromium()).newContext();
      try {
        const page = await context.newPage();
        const errors: string[] = [];
        page.on('pageerror', (error) => errors.push(error.message));
        page.on('console', (message) => {
          if (message.type() === 'error') errors.push(message.text());
        });
        await page.goto(`${steward.url}/login`);
        await page.fill('input[name="token"]', OWNER_TOKEN);
        await page.press('input[name="token"]', 'Enter');
        await page.waitForURL('**/chat');
        await page.goto(`${steward.url}/skills`);
        await page.click('a[href^="/skills/history?name=travel.plan"]');
        await page.waitForURL('**/skills/history?**');
        await page.click('tr[data-version="1"] button');
        await page.waitForSelector('.notice');
        expect(await page.textContent('.notice')).toContain(
          'Rolled back to version 1: travel.plan is now version 6.',
        );
        expect(await page.textContent('tr[data-version="6"]')).toContain('rolled back to version 1');
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    });
  });
}
