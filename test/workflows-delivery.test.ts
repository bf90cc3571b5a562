import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboxOf, recentDeliveries } from '../src/channels/index.ts';
import { loadConfig, type ResolvedConfig } from '../src/config/index.ts';
import { silentLogger } from '../src/logging/logger.ts';
import { createRuntime, type Runtime } from '../src/runtime.ts';
import { ensureUser, linkIdentity, noteIdentityActivity, setPrimaryChannel } from '../src/users/index.ts';
import { scheduleApiRoutes, WORKFLOW_RUN_JOB } from '../src/workflows/index.ts';
import { backends, createTestDatabase, type TestDatabase } from './support/db.ts';
import {
  FAKE_PHONE_NUMBER_ID,
  FAKE_WHATSAPP_TOKEN,
  type FakeGraph,
  startFakeGraph,
} from './support/fake-graph.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { FAKE_SLACK_TOKEN, type FakeSlack, startFakeSlack } from './support/fake-slack.ts';
import { FAKE_BOT_TOKEN, type FakeTelegram, startFakeTelegram } from './support/fake-telegram.ts';
import { ROLE_MODELS, writeTestConfig } from './support/steward.ts';

/*
 * Scheduled output nobody is watching: a run whose user's primary channel refuses the message
 * is delivered on their next channel (most recently used first), the run's receipt says so,
 * and the owner is alerted. With no channel left, it waits in the dashboard inbox.
 */

const ANA_TELEGRAM = '4242';
const ANA_SLACK = 'U0ANA';
const ANA_WHATSAPP = '16505550042';
const OWNER_SLACK = 'U0OWNER';
const BLOCKED = {
  status: 403,
  json: { ok: false, error_code: 403, description: 'Forbidden: bot was blocked by the user' },
};

for (const backend of backends()) {
  describe(`scheduled deliveries with a fallback [${backend}]`, () => {
    let llm: FakeLlm;
    let telegram: FakeTelegram;
    let slack: FakeSlack;
    let graph: FakeGraph;
    let db: TestDatabase;
    let runtime: Runtime;
    let config: ResolvedConfig;
    // Ahead of real time, on a whole minute: the outbox compares its rows' times with this clock.
    let clock = new Date(Math.ceil((Date.now() + 86_400_000) / 60_000) * 60_000);
    const now = () => clock;
    const replies: string[] = [];

    beforeAll(async () => {
      [llm, telegram, slack, graph] = await Promise.all([
        startFakeLlm(),
        startFakeTelegram(),
        startFakeSlack(),
        startFakeGraph(),
      ]);
      const { dir, env } = writeTestConfig(
        llm.url,
        `channels:
  telegram: { bot_token: "${FAKE_BOT_TOKEN}", api_root: "${telegram.url}" }
  slack: { bot_token: "${FAKE_SLACK_TOKEN}", signing_secret: "slack-signing-secret-0123", api_url: "${slack.apiUrl}" }
  whatsapp:
    access_token: "${FAKE_WHATSAPP_TOKEN}"
    app_secret: "whatsapp-app-secret-0123"
    verify_token: "whatsapp-verify-token-0123"
    phone_number_id: "${FAKE_PHONE_NUMBER_ID}"
    graph_url: "${graph.graphUrl}"
`,
      );
      config = loadConfig({ env, cwd: dir });
      db = await createTestDatabase(backend);
      runtime = await createRuntime(config, { database: db.database, logger: silentLogger(), now });
      llm.respondWith((request) => {
        if (request.body.model !== ROLE_MODELS.sub_agent)
          throw new Error(`unexpected ${request.body.model} request`);
        return { text: replies.shift() ?? 'no reply queued' };
      });
      const { database } = runtime;
      await ensureUser(database, 'ana');
      // Telegram is Ana's primary channel; she wrote from WhatsApp a week ago and from Slack today.
      await linkIdentity(database, { channel: 'telegram', externalId: ANA_TELEGRAM, userId: 'ana' });
      await linkIdentity(database, { channel: 'whatsapp', externalId: ANA_WHATSAPP, userId: 'ana' });
      await linkIdentity(database, { channel: 'slack', externalId: ANA_SLACK, userId: 'ana' });
      await noteIdentityActivity(database, 'whatsapp', ANA_WHATSAPP, {
        at: new Date(clock.getTime() - 7 * 86_400_000),
      });
      await noteIdentityActivity(database, 'slack', ANA_SLACK, { at: new Date(clock.getTime() - 3_600_000) });
      await setPrimaryChannel(database, 'ana', 'telegram');
      // The owner hears of delivery trouble on Slack.
      await ensureUser(database, 'local');
      await linkIdentity(database, { channel: 'slack', externalId: OWNER_SLACK, userId: 'local' });
      const dir2 = path.join(config.skillsDir, 'workflows');
      mkdirSync(dir2, { recursive: true });
      writeFileSync(
        path.join(dir2, 'ana_digest.md'),
        '---\nname: workflows.ana_digest\ndescription: Ana digest\nowner: ana\nschedule: "*/5 * * * *"\ntimezone: UTC\n---\n\nSummarize the day.\n',
      );
      runtime.skills.load();
      await runtime.workflows.start({ timer: false });
    }, 180_000);
    afterAll(async () => {
      llm?.respondWith(null);
      await runtime?.close();
      await db?.drop();
      await Promise.all([llm?.close(), telegram?.close(), slack?.close(), graph?.close()]);
    });

    /** The next scheduled time: ticks, runs the job, lets the outbox send and the alerts go out. */
    const runScheduled = async (reply: string) => {
      clock = new Date(Math.ceil((clock.getTime() + 1) / 300_000) * 300_000 + 1_000);
      expect((await runtime.workflows.tick()).enqueued).toBe(1);
      replies.push(reply);
      expect(await runtime.jobs.drain([WORKFLOW_RUN_JOB])).toBe(1);
      await runtime.channels.sender.flush();
      await runtime.observability.flush();
      await runtime.channels.sender.flush();
    };
    const ownerApi = () => {
      const app = new Hono<{ Variables: { principal: { userId: string; owner: boolean } } }>();
      app.use('*', async (c, next) => {
        c.set('principal', { userId: 'local', owner: true });
        await next();
      });
      app.route('/api', scheduleApiRoutes(runtime.workflows));
      return app;
    };

    it('delivers on the next channel when the primary refuses, records it so, and alerts the owner', async () => {
      telegram.failNext('sendMessage', BLOCKED);
      await runScheduled('Your digest: **two** meetings.');

      expect(telegram.sent.filter((message) => message.chat_id === ANA_TELEGRAM)).toEqual([]);
      expect(graph.sent).toEqual([]); // WhatsApp was used less recently than Slack
      expect(slack.posts.filter((post) => post.channel === ANA_SLACK).map((post) => post.text)).toEqual([
        'Your digest: *two* meetings.',
      ]);

      const [view] = await runtime.workflows.list('ana');
      expect(view).toMatchObject({ name: 'ana_digest', last_status: 'ok' });
      expect(view!.delivery).toMatchObject({
        status: 'delivered',
        channel: 'slack',
        fallback: true,
        inbox: false,
        attempts: [
          {
            channel: 'telegram',
            chat_id: ANA_TELEGRAM,
            status: 'failed',
            error: expect.stringContaining('blocked'),
          },
          { channel: 'slack', chat_id: ANA_SLACK, status: 'delivered', error: null },
        ],
      });
      const response = await ownerApi().request('/api/schedules?user=ana');
      const body = (await response.json()) as { schedules: Array<Record<string, unknown>> };
      expect(body.schedules[0]).toMatchObject({
        name: 'ana_digest',
        last_status: 'ok',
        delivery: { status: 'delivered', channel: 'slack', fallback: true },
      });

      const alerts = slack.posts.filter((post) => post.channel === OWNER_SLACK);
      expect(alerts).toHaveLength(1);
      expect(alerts[0]!.text).toContain('A workflow delivery to ana failed on telegram');
      expect(alerts[0]!.text).toContain('Sent on slack instead');
    });

    it('the next run goes to the primary channel again, and is recorded delivered there', async () => {
      await runScheduled('Quiet day.');
      expect(telegram.sent.filter((message) => message.chat_id === ANA_TELEGRAM)).toHaveLength(1);
      const [view] = await runtime.workflows.list('ana');
      expect(view!.delivery).toMatchObject({
        status: 'delivered',
        channel: 'telegram',
        fallback: false,
        attempts: [{ channel: 'telegram', status: 'delivered' }],
      });
    });

    it('with every channel refusing, the output waits in the dashboard inbox and the run says failed', async () => {
      telegram.failNext('sendMessage', BLOCKED);
      slack.failNext('chat.postMessage', { status: 200, json: { ok: false, error: 'account_inactive' } });
      graph.failNext({
        status: 400,
        json: { error: { message: '(#131026) Message undeliverable', type: 'OAuthException', code: 131026 } },
      });
      const before = slack.posts.length;
      await runScheduled('Everything failed today.');
      const [view] = await runtime.workflows.list('ana');
      expect(view!.delivery).toMatchObject({
        status: 'failed',
        channel: 'inbox',
        inbox: true,
        attempts: [
          { channel: 'telegram', status: 'failed' },
          { channel: 'slack', status: 'failed', error: expect.stringContaining('account_inactive') },
          { channel: 'whatsapp', status: 'failed', error: expect.stringContaining('undeliverable') },
        ],
      });
      const [entry] = await inboxOf(runtime.database, 'ana');
      expect(entry).toMatchObject({ text: 'Everything failed today.', readAt: null });
      expect(entry!.note).toContain('telegram');
      // "Failed on telegram" was said by the first test's alert (throttled per user and channel);
      // that nothing was left is new. No alert for the hop from Slack to WhatsApp.
      const ownerAlerts = slack.posts.slice(before).filter((post) => post.channel === OWNER_SLACK);
      expect(ownerAlerts.map((post) => post.text.split('\n')[0])).toEqual([
        '[ERROR] Steward: A workflow delivery to ana reached no channel (telegram, slack, whatsapp failed)',
      ]);
      expect(ownerAlerts[0]!.text).toContain('It waits in their dashboard inbox');
      expect(ownerAlerts[0]!.text).toContain('undeliverable');
      // The alert itself is a delivery, and it arrived.
      const [latest] = await recentDeliveries(runtime.database, { userId: 'local', limit: 1 });
      expect(latest).toMatchObject({ source: 'alert', status: 'delivered', channel: 'slack' });
    });

    it('a run that fails alerts the owner (and still delivers what failed)', async () => {
      llm.respondWith(() => {
        throw new Error('the model is down');
      });
      const before = slack.posts.length;
      clock = new Date(Math.ceil((clock.getTime() + 1) / 300_000) * 300_000 + 1_000);
      await runtime.workflows.tick();
      await runtime.jobs.drain([WORKFLOW_RUN_JOB]);
      llm.respondWith((request) => {
        if (request.body.model !== ROLE_MODELS.sub_agent)
          throw new Error(`unexpected ${request.body.model} request`);
        return { text: replies.shift() ?? 'no reply queued' };
      });
      await runtime.channels.sender.flush();
      await runtime.observability.flush();
      await runtime.channels.sender.flush();
      const [view] = await runtime.workflows.list('ana');
      expect(view!.last_status).toBe('failed');
      expect(view!.delivery).toMatchObject({ status: 'delivered', channel: 'telegram' });
      const alert = slack.posts.slice(before).find((post) => post.channel === OWNER_SLACK);
      expect(alert?.text).toContain('Workflow workflows.ana_digest failed');
    });
  });
}
