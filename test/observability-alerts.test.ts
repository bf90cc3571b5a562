import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { dailyUsage } from '../src/llm/index.ts';
import { SkillExecutor } from '../src/skills/executor/index.ts';
import { loadSkillRoots } from '../src/skills/registry/index.ts';
import { defineHandler } from '../src/skills/types.ts';
import { createApiToken } from '../src/users/index.ts';
import { dispatch, getResults, refuse, reply, run, scriptModels } from './support/agent-scripts.ts';
import { backends } from './support/db.ts';
import { startFakeImap } from './support/fake-imap.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { startFakeSmtp } from './support/fake-smtp.ts';
import { type FakeWebhook, startFakeWebhook } from './support/fake-webhook.ts';
import { startTestSteward, type TestSteward } from './support/steward.ts';
import { usageApiApp } from './support/web.ts';

/*
 * Alerts that reach the Google Chat webhook from a running Steward: breaker openings, sentinel
 * refusals, and the daily spend caps priced from the fake LLM's usage figures.
 */

let fake: FakeLlm;
let webhook: FakeWebhook;
beforeAll(async () => {
  [fake, webhook] = await Promise.all([startFakeLlm(), startFakeWebhook()]);
});
afterAll(async () => {
  await Promise.all([fake?.close(), webhook?.close()]);
});
afterEach(() => {
  webhook.reset();
  fake.reset();
});

const texts = () => webhook.delivered.map((entry) => (entry.body as { text: string }).text);
const alertsYaml = () => `alerts: { webhook_url: "${webhook.url}/hook?key=k" }\n`;

describe('breaker and sentinel alerts', () => {
  let steward: TestSteward;
  beforeAll(async () => {
    steward = await startTestSteward(backends()[0]!, fake, { extraYaml: alertsYaml() });
  });
  afterAll(async () => {
    await steward?.close();
  });

  it('a circuit breaker opening alerts once per opening', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'steward-breaker-'));
    mkdirSync(path.join(root, 'feeds'));
    writeFileSync(
      path.join(root, 'feeds', 'fetch.md'),
      '---\nname: feeds.fetch\ndescription: fetch a feed\nreadonly: true\n---\n# feeds.fetch\n',
    );
    const snapshot = loadSkillRoots([{ dir: root, source: 'user' }]);
    let nowMs = Date.parse('2026-11-22T10:00:00Z');
    const executor = new SkillExecutor({
      database: steward.db.database,
      skills: () => snapshot,
      handlers: new Map([
        [
          'feeds.fetch',
          defineHandler({
            name: 'feeds.fetch',
            flags: z.object({}).strict(),
            execute: async () => {
              throw new Error('feed server down');
            },
          }),
        ],
      ]),
      services: steward.runtime.services,
      logger: steward.runtime.logger,
      breaker: {
        failureThreshold: 3,
        cooldownMs: 60_000,
        onStateChange: steward.runtime.observability.onBreakerChange,
      },
      now: () => new Date(nowMs),
    });
    const call = () =>
      executor.execute({
        command: 'feeds.fetch',
        caller: { kind: 'cli' },
        user: { id: 'local', timezone: 'UTC' },
      });
    for (let attempt = 0; attempt < 8; attempt++) await call();
    await steward.runtime.observability.flush();
    expect(texts()).toEqual([
      // A handler's own error counts against the caller's per-user breaker.
      "[WARNING] Steward: Circuit breaker opened for feeds.fetch (user local)\nlocal's calls to feeds.fetch are paused after repeated failures; last: feed server down",
    ]);
    // After the cooldown the trial call fails: that is a new opening, counted in the throttle window.
    nowMs += 61_000;
    await call();
    await steward.runtime.observability.flush();
    expect(texts()).toHaveLength(1);
  });

  it('a sentinel refusal alerts the operator without the request text', async () => {
    const models = scriptModels(fake, {
      orchestrator: [
        dispatch({ agent_id: 'cleaner', mission: 'Delete the task "Taxes 2025"', skills: ['tasks.delete'] }),
        getResults(),
      ],
      agents: { cleaner: [run('tasks.delete --id t_missing')] },
      sentinel: [refuse('The user did not ask to delete anything.')],
    });
    const outcome = await steward.runtime.engine.handle({
      userId: 'local',
      text: 'Tidy up my taxes reminder',
      channel: 'cli',
    });
    models.assertDone();
    expect(outcome.status).toBe('paused');
    await steward.runtime.observability.flush();
    expect(texts()).toHaveLength(1);
    expect(texts()[0]).toContain('The safety check stopped tasks.delete');
    expect(texts()[0]).toContain(`turn ${outcome.turnId}`);
    expect(texts()[0]).not.toContain('Taxes');
  });
});

describe('alerts by email', () => {
  it("go out through the owner's connected mailbox to alerts.email_to, from error severity up", async () => {
    const [imap, smtp] = await Promise.all([
      startFakeImap({ user: 'owner@example.com', password: 'imap-pass-0123' }),
      startFakeSmtp({ user: 'owner@example.com', password: 'smtp-pass-0123' }),
    ]);
    const steward = await startTestSteward(backends()[0]!, fake, {
      extraYaml: `alerts: { email_to: "ops@example.com" }\nemail: { imap_url: "${imap.url}", smtp_url: "${smtp.url}" }\n`,
    });
    try {
      const { alerts } = steward.runtime.observability;
      alerts.raise({ severity: 'warning', key: 'w', title: 'Only a warning' });
      alerts.jobFailed('memory.compaction', 'job-7', 'database unreachable');
      await steward.runtime.observability.flush();
      expect(smtp.received).toHaveLength(1);
      expect(smtp.received[0]!.to).toEqual(['ops@example.com']);
      expect(smtp.received[0]!.raw).toContain(
        'Subject: [Steward error] Job memory.compaction failed after its last retry',
      );
      expect(smtp.received[0]!.raw).toContain('job job-7: database unreachable');
    } finally {
      await steward.close();
      await Promise.all([imap.close(), smtp.close()]);
    }
  });
});

for (const backend of backends()) {
  describe(`daily spend caps [${backend}]`, () => {
    let steward: TestSteward;
    beforeAll(async () => {
      steward = await startTestSteward(backend, fake, {
        // $1,000 per million tokens: a call of 1,000 prompt + 100 completion tokens costs $1.10.
        llmYaml: '  models:\n    - { id: "test/orchestrator", pricing: { input: 1000, output: 1000 } }\n',
        extraYaml: `${alertsYaml()}spend: { daily_soft_usd: 1, daily_hard_usd: 2 }\n`,
      });
    });
    afterAll(async () => {
      await steward?.close();
    });

    it('alert at the soft cap, refuse turns at the hard cap with a clear reply, and alert the owner', async () => {
      const priced = () =>
        reply('Sure.', {
          usage: { promptTokens: 1_000, completionTokens: 100, cachedTokens: 0, cacheWriteTokens: 0 },
        });
      const turn = () => steward.runtime.engine.handle({ userId: 'spender', text: 'Hello', channel: 'cli' });
      fake.enqueue(priced());
      expect((await turn()).status).toBe('completed');
      await webhook.waitFor(1);
      expect(texts()[0]).toMatch(
        /Daily spend alert for spender\n\$1\.1000 spent on \d{4}-\d{2}-\d{2} \(UTC\), alert at \$1\.00/,
      );

      fake.enqueue(priced());
      expect((await turn()).status).toBe('completed');
      const refused = await turn();
      fake.assertDone();
      expect(refused.status).toBe('failed');
      expect(refused.reply).toContain(
        'the daily spending limit of $2.00 is reached ($2.20 spent today, UTC)',
      );
      expect(refused.reply).toContain('resets at midnight UTC');
      await turn();
      await steward.runtime.observability.flush();
      expect(texts()).toHaveLength(2);
      expect(texts()[1]).toContain(
        '[ERROR] Steward: Daily spend limit reached for spender: new turns are refused',
      );

      // Another user is not affected, and `steward usage` reads the same stored figures.
      fake.enqueue(reply('Hi.'));
      expect(
        (await steward.runtime.engine.handle({ userId: 'frugal', text: 'Hi', channel: 'cli' })).status,
      ).toBe('completed');
      const usage = await dailyUsage(steward.db.database, { days: 1, userId: 'spender' });
      expect(usage).toEqual([
        {
          date: new Date().toISOString().slice(0, 10),
          user: 'spender',
          model: 'test/orchestrator',
          calls: 2,
          prompt_tokens: 2_000,
          cached_tokens: 0,
          completion_tokens: 200,
          cost_usd: 2.2,
        },
      ]);

      // GET /api/usage: the owner sees every user, a user's own token only that user.
      const app = usageApiApp(steward);
      const usageOf = async (query: string, token?: string) => {
        const response = await app.request(`/api/usage${query}`, {
          headers: token ? { authorization: `Bearer ${token}` } : {},
        });
        return {
          status: response.status,
          body: (await response.json()) as { days?: Array<{ user: string }> },
        };
      };
      const everyone = await usageOf('?days=1');
      expect(everyone.body.days?.map((day) => day.user).sort()).toEqual(['frugal', 'spender']);
      const { token } = await createApiToken(steward.db.database, 'frugal');
      expect((await usageOf('?days=1', token)).body.days?.map((day) => day.user)).toEqual(['frugal']);
      expect((await usageOf('?user=spender', token)).status).toBe(403);
      expect((await usageOf('?days=0')).status).toBe(400);
    });
  });
}
