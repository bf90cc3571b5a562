import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryCursors } from '../src/channels/cursor-store.ts';
import { DiscordAdapter } from '../src/channels/discord/discord-adapter.ts';
import type { GatewayPort } from '../src/channels/types.ts';
import { silentLogger } from '../src/logging/logger.ts';
import type { Runtime } from '../src/runtime.ts';
import { type ChannelSteward, startChannelSteward, startChannelsRuntime } from './support/channels.ts';
import { backends, createTestDatabase, type TestDatabase } from './support/db.ts';
import {
  DISCORD_INTENTS_EXPECTED,
  discordMessage,
  FAKE_DISCORD_BOT_ID,
  FAKE_DISCORD_TOKEN,
  type FakeDiscord,
  startFakeDiscord,
} from './support/fake-discord.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';

const OWNER = '2200000000000000001';
const DM = '3300000000000000001';
const GUILD = '4400000000000000001';
const GUILD_CHANNEL = '4400000000000000002';

const channelsYaml = (discord: FakeDiscord, allow: string[]) => `channels:
  allow: [${allow.map((entry) => `"${entry}"`).join(', ')}]
  discord: { bot_token: "${FAKE_DISCORD_TOKEN}", api_url: "${discord.apiUrl}", gateway_url: "${discord.gatewayUrl}" }
`;

let nextMessage = 5_000_000_000_000_000_000n;
const messageId = () => String(nextMessage++);

/**
 * Waits until Steward has handled every event dispatched so far: a heartbeat carries the last
 * sequence it has handled (stored, or found to need nothing), so what it made of them is in the
 * database by then.
 */
async function handledAll(discord: FakeDiscord): Promise<void> {
  const sequence = discord.sequence();
  await expect
    .poll(() => discord.heartbeats.at(-1)?.d ?? 0, { timeout: 10_000, interval: 20 })
    .toBeGreaterThanOrEqual(sequence);
}

for (const backend of backends()) {
  describe(`Discord over a fake Gateway [${backend}]`, { timeout: 60_000 }, () => {
    let llm: FakeLlm;
    let discord: FakeDiscord;
    let steward: ChannelSteward;
    const postsIn = (channelId: string) => discord.posts.filter((post) => post.channel_id === channelId);
    const storedWithId = (id: string) =>
      steward.count(
        "SELECT count(*) FROM inbound_messages WHERE channel = 'discord' AND channel_message_id = $1",
        [id],
      );
    const dm = (content: string, author = OWNER, channelId = DM, id = messageId()) => {
      discord.dispatch('MESSAGE_CREATE', discordMessage({ id, channelId, authorId: author, content }));
      return id;
    };

    beforeAll(async () => {
      llm = await startFakeLlm();
      discord = await startFakeDiscord({ heartbeatIntervalMs: 250 });
      steward = await startChannelSteward(backend, llm, channelsYaml(discord, [`discord:${OWNER}`]));
      await discord.ready();
      await discord.sessionTaken();
    });
    afterAll(async () => {
      await steward?.close();
      await discord?.close();
      await llm?.close();
    });

    it('identifies with its intents, heartbeats at the given interval, and answers a DM in Discord markdown', async () => {
      expect(discord.identifies).toEqual([{ token: FAKE_DISCORD_TOKEN, intents: DISCORD_INTENTS_EXPECTED }]);
      llm.enqueue({ text: 'It is __noon__, see [the clock](https://time.example/now).', latencyMs: 400 });
      dm('what time is it?');
      await expect.poll(() => postsIn(DM).length, { timeout: 15_000 }).toBe(1);
      expect(postsIn(DM)[0]).toMatchObject({
        content: 'It is **noon**, see [the clock](https://time.example/now).',
        allowed_mentions: { parse: [] },
      });
      expect(postsIn(DM)[0]!.message_reference).toBeUndefined();
      expect(discord.typing).toContain(DM);
      expect(JSON.stringify(llm.chatRequests.at(-1)!.body.messages)).toContain('what time is it?');
      // Heartbeats keep coming, each carrying the last sequence handled.
      const seen = discord.heartbeats.length;
      await expect.poll(() => discord.heartbeats.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(seen + 2);
      expect(discord.heartbeats.at(-1)!.d).toBeGreaterThanOrEqual(2);
      llm.assertDone();
    });

    it('answers a mention in a guild channel as a reply, ignores the rest and its own messages', async () => {
      llm.enqueue({ text: 'On it.' });
      const chatter = messageId();
      discord.dispatch(
        'MESSAGE_CREATE',
        discordMessage({
          id: chatter,
          channelId: GUILD_CHANNEL,
          guildId: GUILD,
          authorId: OWNER,
          content: 'dinner at eight',
        }),
      );
      const mention = messageId();
      discord.dispatch(
        'MESSAGE_CREATE',
        discordMessage({
          id: mention,
          channelId: GUILD_CHANNEL,
          guildId: GUILD,
          authorId: OWNER,
          content: `<@${FAKE_DISCORD_BOT_ID}> what is on my list?`,
          mentions: [FAKE_DISCORD_BOT_ID],
        }),
      );
      await expect.poll(() => postsIn(GUILD_CHANNEL).length, { timeout: 15_000 }).toBe(1);
      expect(postsIn(GUILD_CHANNEL)[0]).toMatchObject({
        content: 'On it.',
        message_reference: { message_id: mention },
      });
      const shown = JSON.stringify(llm.chatRequests.at(-1)!.body.messages);
      expect(shown).toContain('what is on my list?');
      expect(shown).not.toContain(FAKE_DISCORD_BOT_ID);
      expect(shown).not.toContain('dinner at eight');
      // Its own message came back and was not answered: handled (see `handledAll`), never stored.
      await handledAll(discord);
      expect(await storedWithId(postsIn(GUILD_CHANNEL)[0]!.id)).toBe(0);
      expect(postsIn(GUILD_CHANNEL)).toHaveLength(1);
      llm.assertDone();
    });

    it('resumes after op 7 with its session and sequence; a message sent meanwhile arrives once', async () => {
      const connections = discord.connections();
      const identified = discord.identifies.length;
      llm.enqueue({ text: 'Still here.' });
      discord.requestReconnect();
      const id = dm('are you still there?');
      await expect.poll(() => postsIn(DM).at(-1)?.content, { timeout: 15_000 }).toBe('Still here.');
      expect(discord.connections()).toBe(connections + 1);
      expect(discord.identifies).toHaveLength(identified);
      expect(discord.resumes.at(-1)).toMatchObject({ accepted: true });
      // The same message again (a resumed session re-sending it) is dropped by its id.
      const posts = postsIn(DM).length;
      dm('are you still there?', OWNER, DM, id);
      await handledAll(discord);
      // Only a second stored copy could be answered: there is none.
      expect(await storedWithId(id)).toBe(1);
      expect(postsIn(DM)).toHaveLength(posts);
      llm.assertDone();
    });

    it('resumes after a dropped connection and after unanswered heartbeats (a zombie connection)', async () => {
      const resumed = discord.resumes.length;
      discord.dropConnection();
      await expect.poll(() => discord.resumes.length, { timeout: 10_000 }).toBe(resumed + 1);
      discord.ackHeartbeats(false);
      await expect.poll(() => discord.resumes.length, { timeout: 10_000 }).toBe(resumed + 2);
      discord.ackHeartbeats(true);
      await discord.ready();
      llm.enqueue({ text: 'Back.' });
      dm('ping');
      await expect.poll(() => postsIn(DM).at(-1)?.content, { timeout: 15_000 }).toBe('Back.');
      expect(discord.resumes.slice(resumed).every((resume) => resume.accepted)).toBe(true);
      llm.assertDone();
    });

    it('identifies anew after an invalid session (op 9)', async () => {
      const identified = discord.identifies.length;
      discord.invalidateSession();
      // Discord asks for 1–5 s between identifies; the library waits that out.
      await expect.poll(() => discord.identifies.length, { timeout: 20_000 }).toBe(identified + 1);
      await discord.ready();
      llm.enqueue({ text: 'New session, same me.' });
      dm('hello again');
      await expect.poll(() => postsIn(DM).at(-1)?.content, { timeout: 15_000 }).toBe('New session, same me.');
      llm.assertDone();
    });

    it('drops an event it cannot use and keeps reading', async () => {
      const before = await steward.count("SELECT count(*) FROM inbound_messages WHERE channel = 'discord'");
      const broken = discordMessage({ id: messageId(), channelId: DM, authorId: OWNER, content: 'x' });
      broken.content = 42;
      discord.dispatch('MESSAGE_CREATE', broken);
      llm.enqueue({ text: 'Fine.' });
      dm('still fine?');
      await expect.poll(() => postsIn(DM).at(-1)?.content, { timeout: 15_000 }).toBe('Fine.');
      expect(await steward.count("SELECT count(*) FROM inbound_messages WHERE channel = 'discord'")).toBe(
        before + 1,
      );
      llm.assertDone();
    });

    it('gives a stranger a pairing code, then greets and serves them as discord:<id>', async () => {
      const stranger = '2200000000000000777';
      const strangerDm = '3300000000000000777';
      dm('hello, who are you?', stranger, strangerDm);
      await expect.poll(() => postsIn(strangerDm).length, { timeout: 15_000 }).toBe(1);
      const code = /\b([A-Z2-9]{8})\b/.exec(postsIn(strangerDm)[0]!.content)?.[1];
      expect(code).toBeDefined();
      expect(JSON.stringify(llm.chatRequests.map((request) => request.body.messages))).not.toContain(
        'who are you',
      );
      const approval = await steward.runtime.channels.approvePairing(code!);
      expect(approval).toMatchObject({ ok: true, userId: `discord:${stranger}` });
      await expect.poll(() => postsIn(strangerDm).length, { timeout: 15_000 }).toBe(2);
      expect(postsIn(strangerDm)[1]!.content).toContain('approved');
      llm.enqueue({ text: 'Hello, new friend.' });
      dm('now?', stranger, strangerDm);
      await expect
        .poll(() => postsIn(strangerDm).at(-1)?.content, { timeout: 15_000 })
        .toBe('Hello, new friend.');
      llm.assertDone();
    });

    it('splits a long reply at 2,000 characters, in order', async () => {
      const paragraphs = Array.from(
        { length: 4 },
        (_, index) => `Part ${index}: ${'word '.repeat(150).trim()}`,
      );
      llm.enqueue({ text: paragraphs.join('\n\n') });
      const before = postsIn(DM).length;
      dm('tell me everything');
      await expect.poll(() => postsIn(DM).length, { timeout: 15_000 }).toBeGreaterThanOrEqual(before + 2);
      // Every part was queued with the first: all of them are out once none is left to send.
      await expect
        .poll(() =>
          steward.count("SELECT count(*) FROM outbox_messages WHERE status IN ('pending', 'sending')"),
        )
        .toBe(0);
      const parts = postsIn(DM).slice(before);
      expect(parts.every((part) => part.content.length <= 2000)).toBe(true);
      expect(parts.map((part) => part.content).join('\n\n')).toBe(paragraphs.join('\n\n'));
      llm.assertDone();
    });
  });
}

describe(`Discord across a restart [${backends().at(-1)}]`, { timeout: 90_000 }, () => {
  let llm: FakeLlm;
  let discord: FakeDiscord;
  let db: TestDatabase;
  let runtime: Runtime | null = null;
  const start = () => startChannelsRuntime(llm.url, channelsYaml(discord, [`discord:${OWNER}`]), db.database);
  beforeAll(async () => {
    llm = await startFakeLlm();
    discord = await startFakeDiscord({ heartbeatIntervalMs: 1_000 });
    db = await createTestDatabase(backends().at(-1)!);
  });
  afterAll(async () => {
    await runtime?.close();
    await db?.drop();
    await discord?.close();
    await llm?.close();
  });

  it('resumes the stored session: a message sent while Steward was down is answered, none twice', async () => {
    runtime = await start();
    await discord.ready();
    llm.enqueue({ text: 'Before the restart.' });
    discord.dispatch(
      'MESSAGE_CREATE',
      discordMessage({ id: messageId(), channelId: DM, authorId: OWNER, content: 'one' }),
    );
    await expect.poll(() => discord.posts.length, { timeout: 15_000 }).toBe(1);
    await runtime.close();
    runtime = null;

    llm.enqueue({ text: 'After the restart.' });
    discord.dispatch(
      'MESSAGE_CREATE',
      discordMessage({ id: messageId(), channelId: DM, authorId: OWNER, content: 'two' }),
    );
    runtime = await start();
    await expect
      .poll(() => discord.posts.map((post) => post.content), { timeout: 20_000 })
      .toEqual(['Before the restart.', 'After the restart.']);
    expect(discord.identifies).toHaveLength(1);
    expect(discord.resumes.at(-1)).toMatchObject({ accepted: true });
    // Everything replayed and sent since has been handled; only the two messages were stored.
    await handledAll(discord);
    const [stored] = await db.database.query<{ count: number }>(
      "SELECT count(*)::int AS count FROM inbound_messages WHERE channel = 'discord'",
    );
    expect(stored!.count).toBe(2);
    expect(discord.posts).toHaveLength(2);
    llm.assertDone();
  });
});

describe('Discord while messages cannot be stored', { timeout: 60_000 }, () => {
  let discord: FakeDiscord;
  let adapter: DiscordAdapter;
  beforeAll(async () => {
    discord = await startFakeDiscord({ heartbeatIntervalMs: 200 });
  });
  afterAll(async () => {
    await adapter?.stop();
    await discord?.close();
  });

  it('holds the sequence back until a message is stored, so a resume replays it; stored once', async () => {
    const stored = new Map<string, string>();
    let failures = 0;
    let down = true;
    const gateway: GatewayPort = {
      now: () => new Date(),
      receive: async (message) => {
        if (down) {
          failures++;
          throw new Error('database down');
        }
        const duplicate = stored.has(message.channelMessageId);
        stored.set(message.channelMessageId, message.text);
        return { id: stored.size, duplicate };
      },
    };
    adapter = new DiscordAdapter({
      botToken: FAKE_DISCORD_TOKEN,
      apiUrl: discord.apiUrl,
      gatewayUrl: discord.gatewayUrl,
      cursors: memoryCursors(),
      logger: silentLogger(),
    });
    await adapter.start(gateway);
    await discord.ready();
    await discord.sessionTaken();
    const id = messageId();
    const sequence = discord.dispatch(
      'MESSAGE_CREATE',
      discordMessage({ id, channelId: DM, authorId: OWNER, content: 'keep me' }),
    );
    await expect.poll(() => failures, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    expect(adapter.session.retrieve()!.sequence).toBeLessThan(sequence);
    // The connection drops while the message is not stored: the resume asks for it again.
    discord.dropConnection();
    await expect.poll(() => discord.resumes.length, { timeout: 10_000 }).toBe(1);
    expect(discord.resumes[0]!.seq).toBeLessThan(sequence);
    down = false;
    await expect.poll(() => stored.get(id), { timeout: 15_000 }).toBe('keep me');
    await expect
      .poll(() => adapter.session.retrieve()!.sequence, { timeout: 10_000 })
      .toBeGreaterThanOrEqual(sequence);
    expect(stored.size).toBe(1);
  });
});

describe('Discord when the Gateway never answers', () => {
  it('keeps trying in the background and stops promptly', async () => {
    const discord = await startFakeDiscord();
    const adapter = new DiscordAdapter({
      botToken: FAKE_DISCORD_TOKEN,
      apiUrl: discord.apiUrl,
      gatewayUrl: 'ws://127.0.0.1:9/nobody-listens',
      cursors: memoryCursors(),
      logger: silentLogger(),
    });
    try {
      const started = Date.now();
      await adapter.start({ now: () => new Date(), receive: async () => ({ id: 1, duplicate: false }) });
      expect(Date.now() - started).toBeLessThan(1_000);
      await expect.poll(() => discord.calls('gateway').length, { timeout: 5_000 }).toBeGreaterThan(0);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const stopping = Date.now();
      await adapter.stop();
      expect(Date.now() - stopping).toBeLessThan(7_000);
    } finally {
      await discord.close();
    }
  });
});
