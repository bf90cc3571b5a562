import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channelApiRoutes } from '../src/channels/index.ts';
import { silentLogger } from '../src/logging/logger.ts';
import { type AuthEnv, createServerApp } from '../src/server/index.ts';
import { createApiToken, ensureUser } from '../src/users/index.ts';
import { telegramText } from './support/channel-fixtures.ts';
import { type ChannelSteward, startChannelSteward } from './support/channels.ts';
import { backends } from './support/db.ts';
import { type FakeLlm, type FakeRequest, startFakeLlm } from './support/fake-llm.ts';
import { FAKE_BOT_TOKEN, type FakeTelegram, startFakeTelegram } from './support/fake-telegram.ts';

const SECRET = 'access-test-secret';

/** The orchestrator runs the read-only skill the user names, then answers with its result. */
function echoSkill(request: FakeRequest) {
  const messages = request.body.messages ?? [];
  const lastUser = messages.findLastIndex((message) => message.role === 'user');
  const tool = messages.slice(lastUser).find((message) => message.role === 'tool');
  if (tool) {
    const content = typeof tool.content === 'string' ? tool.content : JSON.stringify(tool.content);
    return { text: `Result: ${content}` };
  }
  const asked = JSON.stringify(messages[lastUser]?.content ?? '');
  const command = asked.includes('memory') ? 'memory.search --query locker' : 'tasks.search';
  return { toolCalls: [{ name: 'run', arguments: { command } }] };
}

for (const backend of backends()) {
  describe(`who is served, as whom [${backend}]`, () => {
    let llm: FakeLlm;
    let telegram: FakeTelegram;
    let steward: ChannelSteward;
    let update = 5000;
    const ask = async (fromId: number, text: string) => {
      const sent = telegram.sent.length;
      const response = await steward.post(
        '/webhooks/telegram',
        telegramText({ updateId: update, messageId: update++, fromId, text }),
        {
          'x-telegram-bot-api-secret-token': SECRET,
        },
      );
      expect(response.status).toBe(200);
      await expect.poll(() => telegram.sent.length, { timeout: 15_000 }).toBe(sent + 1);
      return telegram.sent.at(-1)!.text;
    };
    const seed = async (userId: string, command: string) => {
      await ensureUser(steward.runtime.database, userId);
      const outcome = await steward.runtime.executor.execute({
        command,
        caller: { kind: 'cli' },
        user: { id: userId, timezone: 'UTC' },
        channel: 'cli',
        confirmed: true,
      });
      expect(outcome.status, outcome.content).toBe('ok');
    };

    beforeAll(async () => {
      llm = await startFakeLlm();
      llm.respondWith(echoSkill);
      telegram = await startFakeTelegram();
      steward = await startChannelSteward(
        backend,
        llm,
        `channels:
  public_url: "http://127.0.0.1:9"
  allow: ["telegram:1111=alice", "telegram:3333"]
  telegram: { bot_token: "${FAKE_BOT_TOKEN}", webhook_secret: "${SECRET}", api_root: "${telegram.url}" }
`,
      );
      await steward.runtime.channels.linkSender('telegram', '2222', 'alice');
      await seed('alice', 'tasks.create --title "Buy oat milk"');
      await seed('alice', 'memory.save --content "The locker code is 4711" --category fact');
      await seed('telegram:3333', 'tasks.create --title "Secret plan of user three"');
    });
    afterAll(async () => {
      await steward?.close();
      await telegram?.close();
      await llm?.close();
    });

    it('serves an allowlisted sender as the user its entry names, and a linked identity as the same user', async () => {
      const viaAllow = await ask(1111, 'what tasks do I have?');
      expect(viaAllow).toContain('Buy oat milk');
      expect(viaAllow).not.toContain('Secret plan');
      const viaLink = await ask(2222, 'what is in my memory about the locker?');
      expect(viaLink).toContain('4711');
      const users = await steward.runtime.database.query<{ user_id: string }>(
        'SELECT DISTINCT user_id FROM turns ORDER BY user_id',
      );
      expect(users).toEqual([{ user_id: 'alice' }]);
    });

    it('never shows one user another user’s tasks or memories', async () => {
      const tasks = await ask(3333, 'what tasks do I have?');
      expect(tasks).toContain('Secret plan of user three');
      expect(tasks).not.toContain('oat milk');
      const memories = await ask(3333, 'what is in my memory about the locker?');
      expect(memories).not.toContain('4711');
      const seen = llm.chatRequests.filter((request) =>
        JSON.stringify(request.body.messages).includes('Secret plan'),
      );
      expect(seen.every((request) => !JSON.stringify(request.body.messages).includes('4711'))).toBe(true);
    });

    it('joins a paired sender to an existing user with --as: they see that user’s tasks and memories', async () => {
      const pairingText = await ask(5555, 'hello?');
      const code = /\b([A-Z2-9]{8})\b/.exec(pairingText)?.[1];
      expect(code).toBeDefined();
      const unknown = await steward.runtime.channels.approvePairing(code!, { as: 'nobody' });
      expect(unknown).toEqual({
        ok: false,
        problem:
          'No user "nobody": --as takes an existing user (local is the owner); leave it out to admit the sender as a new user.',
      });
      // The code is still pending: the mistake costs nothing.
      const approval = await steward.runtime.channels.approvePairing(code!, { as: 'alice' });
      expect(approval).toMatchObject({ ok: true, userId: 'alice' });
      await expect.poll(() => telegram.sent.at(-1)?.text ?? '', { timeout: 10_000 }).toContain('approved');
      expect(await ask(5555, 'what tasks do I have?')).toContain('Buy oat milk');
      expect(await ask(5555, 'what is in my memory about the locker?')).toContain('4711');
      const [user] = await steward.runtime.database.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM users WHERE id = 'telegram:5555'",
      );
      expect(user!.n).toBe(0);
    });

    it('approves pairing over the API with the owner token only, not a user token', async () => {
      const api = new Hono<AuthEnv>();
      api.route('/', channelApiRoutes(steward.runtime.channels));
      const config = steward.runtime.config.get();
      const app = createServerApp({
        database: steward.runtime.database,
        logger: silentLogger(),
        config: () => ({ ...config, api_token: 'owner-token-0123456789' }),
        api,
      });
      await ask(4444, 'let me in');
      const code = /\b([A-Z2-9]{8})\b/.exec(telegram.sent.at(-1)!.text)![1]!;
      const listed = await app.request('/api/pairing', {
        headers: { authorization: 'Bearer owner-token-0123456789' },
      });
      const list = (await listed.json()) as { pending: Array<{ code: string }>; owner_paired: boolean };
      expect(list.pending.map((entry) => entry.code)).toContain(code);
      expect(list.owner_paired).toBe(false);
      const approve = (authorization?: string) =>
        app.request('/api/pairing/approve', {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
          body: JSON.stringify({ code }),
        });
      expect((await approve()).status).toBe(401);
      expect((await approve('Bearer not-the-owner-token')).status).toBe(401);
      const { token: aliceToken } = await createApiToken(steward.runtime.database, 'alice');
      expect((await approve(`Bearer ${aliceToken}`)).status).toBe(403);
      const sent = telegram.sent.length;
      const approved = await approve('Bearer owner-token-0123456789');
      expect(approved.status).toBe(200);
      expect(await approved.json()).toMatchObject({ approved: code, user: 'telegram:4444' });
      await expect.poll(() => telegram.sent.length, { timeout: 10_000 }).toBe(sent + 1);
      expect(telegram.sent.at(-1)).toMatchObject({ chat_id: '4444' });
      expect((await approve('Bearer owner-token-0123456789')).status).toBe(404);

      const primary = (body: object, authorization = 'Bearer owner-token-0123456789') =>
        app.request('/api/users/primary', {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization },
          body: JSON.stringify(body),
        });
      expect((await primary({ user: 'alice', channel: 'telegram' })).status).toBe(200);
      expect((await primary({ user: 'alice', channel: 'fax' })).status).toBe(400);
      expect((await primary({ user: 'nobody', channel: null })).status).toBe(404);
      expect((await primary({ user: 'alice', channel: null }, `Bearer ${aliceToken}`)).status).toBe(403);
    });
  });
}
