import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Hono } from 'hono';
import { beforeAll, expect, it } from 'vitest';
import { describeEachBackend } from '../../../test/support/db.ts';
import { learnedSkillsIn, recordFinishedSkillCall } from '../../../test/support/learned-skills.ts';
import type { SkillRegistry } from '../registry/index.ts';
import { skillApiRoutes } from './api-routes.ts';
import type { LearnedSkills } from './learned-skills.ts';

const page = (name: string) => `## Usage\n\n${name}\n\n## Behavior\n\n1. Look at tasks.search --query it.`;

describeEachBackend('skills API', (db) => {
  let learned: LearnedSkills;
  let registry: SkillRegistry;
  /** The routes as `principal` calls them (the server's auth middleware sets it the same way). */
  const as = (principal: { userId: string; owner: boolean }) => {
    const app = new Hono<{ Variables: { principal: { userId: string; owner: boolean } } }>();
    app.use(async (c, next) => {
      c.set('principal', principal);
      await next();
    });
    app.route(
      '/api',
      skillApiRoutes({
        learned,
        skills: () => registry.snapshot(),
        hasHandler: (handler) => handler === 'tasks.search',
      }),
    );
    return app;
  };
  const owner = { userId: 'local', owner: true };
  const alice = { userId: 'alice', owner: false };

  beforeAll(async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'steward-skills-api-'));
    ({ registry, learned } = learnedSkillsIn(db(), dir));
    const at = new Date('2026-05-01T08:00:00Z');
    for (const userId of ['alice', 'bob']) {
      const name = `garden.${userId}_routine`;
      expect(
        await learned.write(
          { userId, author: 'steward', turnId: null, at },
          { name, description: 'd', body: page(name) },
        ),
      ).toMatchObject({ ok: true });
    }
    expect(
      await learned.update(
        { userId: 'alice', author: 'steward', turnId: null, at },
        { name: 'garden.alice_routine', description: 'Daily garden check', reason: 'clearer' },
      ),
    ).toMatchObject({ ok: true });
  });

  it('gives the history as the CLI prints it; the owner need not name the user', async () => {
    const response = await as(owner).request('/api/skills/garden.alice_routine/history');
    expect(response.status).toBe(200);
    const body = (await response.json()) as { user: string; versions: Array<Record<string, unknown>> };
    expect(body.user).toBe('alice');
    expect(body.versions.map((version) => [version.version, version.author, version.reason])).toEqual([
      [1, 'steward', 'written with skills.write'],
      [2, 'steward', 'clearer'],
    ]);
    expect(body.versions[0]).toMatchObject({ at: '2026-05-01T08:00:00.000Z', change: 'write' });
  });

  it("keeps a user's token to their own skills", async () => {
    expect((await as(alice).request('/api/skills/garden.bob_routine/history?user=bob')).status).toBe(403);
    // Without a user, alice's token means alice: bob's skill has no history for her.
    expect((await as(alice).request('/api/skills/garden.bob_routine/history')).status).toBe(404);
    const rollback = await as(alice).request('/api/skills/garden.bob_routine/rollback', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ to: 1, user: 'bob' }),
    });
    expect(rollback.status).toBe(403);
    expect(await learned.history('bob', 'garden.bob_routine')).toHaveLength(1);
  });

  it('rolls back for the owner, and says why it cannot', async () => {
    const post = (body: unknown) =>
      as(owner).request('/api/skills/garden.alice_routine/rollback', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const done = await post({ to: 1, reason: 'the old wording was fine' });
    expect(done.status).toBe(200);
    expect(await done.json()).toMatchObject({
      user: 'alice',
      version: { version: 3, author: 'local', reason: 'rolled back to version 1: the old wording was fine' },
    });
    expect((await post({ to: 'one' })).status).toBe(400);
    const refused = await post({ to: 7 });
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { message: string }).message).toContain('versions 1 to 3');
  });

  it("counts use, per user for a user's token", async () => {
    const usage = async (principal: { userId: string; owner: boolean }) =>
      (
        (await (await as(principal).request('/api/skills/usage')).json()) as {
          usage: Record<string, unknown>;
        }
      ).usage;
    expect(await usage(owner)).toEqual({});
    const at = new Date('2026-05-02T08:00:00Z');
    for (const [id, userId, skill, status] of [
      ['1', 'alice', 'tasks.search', 'ok'],
      ['2', 'bob', 'tasks.search', 'error'],
      ['3', 'alice', 'garden.alice_routine', 'ok'],
      // bob typing alice's name was an unknown skill, not a run of hers
      ['4', 'bob', 'garden.alice_routine', 'error'],
    ] as const)
      await recordFinishedSkillCall(db(), { id, userId, skill, at, status });
    const used = { last_used: '2026-05-02T08:00:00.000Z' };
    expect(await usage(owner)).toEqual({
      'tasks.search': { runs: 2, failures: 1, ...used },
      'garden.alice_routine': { runs: 1, failures: 0, ...used },
    });
    expect(await usage(alice)).toEqual({
      'tasks.search': { runs: 1, failures: 0, ...used },
      'garden.alice_routine': { runs: 1, failures: 0, ...used },
    });
    expect((await as(alice).request('/api/skills/usage?user=bob')).status).toBe(403);
  });
});
