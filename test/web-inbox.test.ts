import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken, ensureUser, linkIdentity } from '../src/users/index.ts';
import { backends } from './support/db.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { FAKE_BOT_TOKEN, type FakeTelegram, startFakeTelegram } from './support/fake-telegram.ts';
import { runAsCli } from './support/steward.ts';
import { loginAs, startWebSteward, type WebSteward } from './support/web.ts';

/*
 * The dashboard shows deliveries nobody watched: the schedules page says where the last run's
 * output went and whether it arrived, and what no channel took waits in the user's inbox,
 * unread until they mark it — visible to them and the owner, never to another user.
 */

const XSS = '<script>alert("pwned")</script>';
const BLOCKED = {
  status: 403,
  json: { ok: false, error_code: 403, description: 'Forbidden: bot was blocked by the user' },
};

for (const backend of backends()) {
  describe(`dashboard inbox and delivery receipts [${backend}]`, () => {
    let llm: FakeLlm;
    let telegram: FakeTelegram;
    let steward: WebSteward;
    beforeAll(async () => {
      [llm, telegram] = await Promise.all([startFakeLlm(), startFakeTelegram()]);
      steward = await startWebSteward(backend, llm, {
        extraYaml: `channels:\n  telegram: { bot_token: "${FAKE_BOT_TOKEN}", api_root: "${telegram.url}" }\n`,
      });
    }, 180_000);
    afterAll(async () => {
      await steward?.stop();
      await Promise.all([llm?.close(), telegram?.close()]);
    }, 120_000);

    it('shows a run whose output reached no channel on /schedules, and the output in the inbox', async () => {
      expect((await fetch(`${steward.url}/inbox`, { redirect: 'manual' })).status).toBe(302);
      const { runtime } = steward;
      const db = runtime.database;
      await ensureUser(db, 'alice');
      await linkIdentity(db, { channel: 'telegram', externalId: '7070', userId: 'alice' });
      const built = await runAsCli(
        runtime,
        'alice',
        'workflow.build --name alice_brief --description "Brief for Alice" --steps "Use tasks.search to list open tasks" --schedule "0 9 * * *" --timezone UTC',
      );
      expect(built.status, built.content).toBe('ok');
      await runtime.workflows.sync(runtime.skills.load());
      llm.respondWith(() => ({ text: `Your brief: **one** task. ${XSS}` }));
      telegram.failNext('sendMessage', BLOCKED);
      const result = await runtime.workflows.runNow('workflows.alice_brief', 'alice');
      llm.respondWith(null);
      expect(result).toMatchObject({ run: { status: 'ok' } });
      await runtime.channels.sender.flush();

      const alice = await loginAs(steward.url, (await createApiToken(db, 'alice')).token);
      const schedules = await (await alice.get('/schedules')).text();
      expect(schedules).toContain('data-delivery="failed"');
      expect(schedules).toContain('failed on telegram; kept in the dashboard inbox');

      const inbox = await (await alice.get('/inbox')).text();
      expect(inbox).toContain('data-unread="1"');
      expect(inbox).toContain('<strong>one</strong>');
      expect(inbox).not.toContain('<script>alert');
      expect(inbox).toContain('Not delivered on any channel (telegram: HTTP 403: Forbidden: bot was blocked');
      expect(inbox).toContain('failed on telegram; kept in the dashboard inbox'); // the receipts table
      const id = /data-inbox-id="(\d+)"/.exec(inbox)?.[1];
      expect(id).toBeDefined();

      // Another user sees none of it and cannot mark it read.
      await ensureUser(db, 'bob');
      const bob = await loginAs(steward.url, (await createApiToken(db, 'bob')).token);
      const bobs = await (await bob.get('/inbox')).text();
      expect(bobs).toContain('data-unread="0"');
      expect(bobs).not.toContain('Your brief');
      expect((await bob.post('/inbox/read', { id: id! })).status).toBe(303);
      expect(await (await alice.get('/inbox')).text()).toContain('data-unread="1"');

      const read = await alice.post('/inbox/read', { id: id! });
      expect(read.status).toBe(303);
      const after = await (await alice.get('/inbox')).text();
      expect(after).toContain('data-unread="0"');
      expect(after).toContain('Your brief'); // read, not gone
    });
  });
}
