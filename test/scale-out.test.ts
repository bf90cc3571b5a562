import { writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messageText } from './support/agent-scripts.ts';
import { telegramText } from './support/channel-fixtures.ts';
import { answeringPostgres, type Cluster, startCluster } from './support/cluster.ts';
import { type FakeLlm, type FakeRequest, startFakeLlm } from './support/fake-llm.ts';
import { type FakeTelegram, startFakeTelegram } from './support/fake-telegram.ts';

/*
 * Issue 17, item 2: three `steward start` processes on one PostgreSQL database, 200
 * conversations driven through them (the HTTP API and Telegram webhooks, each conversation's
 * messages spread over the instances and sent at once): no message lost, no reply duplicated,
 * turns of one conversation never overlapping, a message to a busy conversation waiting its turn,
 * skills reloaded on every instance, outbox messages sent once.
 */

const server = await answeringPostgres();

const INSTANCES = 3;
const API_CONVERSATIONS = 170;
const TELEGRAM_CHATS = 30;
const MESSAGES = 3;
const TELEGRAM_BASE = 6_000_000;

type Chat = { reply: string; conversationId: string; status: string; turnId: string };

/** The user's own words in the last user message of a request (without the context part). */
function ownText(request: FakeRequest): string {
  const users = (request.body.messages ?? []).filter((message) => message.role === 'user');
  const last = users.at(-1);
  if (!last) return '';
  return typeof last.content === 'string' ? last.content : messageText([last.content.at(-1)!]);
}

/** Runs `tasks` with at most `limit` at once. */
async function pool<T>(limit: number, tasks: Array<() => Promise<T>>): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < tasks.length) {
        const index = next++;
        results[index] = await tasks[index]!();
      }
    }),
  );
  return results;
}

const skillPage = (version: string) =>
  `---\nname: scaled.probe\ndescription: Probe skill ${version}\n---\n\n# scaled.probe\n\nA page every instance must serve, ${version}.\n`;

describe.skipIf(!server)('three instances on one PostgreSQL database', { timeout: 600_000 }, () => {
  let fake: FakeLlm;
  let telegram: FakeTelegram;
  let cluster: Cluster;
  beforeAll(async () => {
    fake = await startFakeLlm();
    telegram = await startFakeTelegram();
    // Replies take a little while, so messages of one conversation meet a busy conversation.
    fake.respondWith((request) => ({
      text: `reply to ${ownText(request)}`,
      latencyMs: 5 + Math.floor(Math.random() * 40),
    }));
    cluster = await startCluster({
      count: INSTANCES,
      fake,
      telegram: {
        url: telegram.url,
        allow: Array.from({ length: TELEGRAM_CHATS }, (_, chat) => `telegram:${TELEGRAM_BASE + chat}`),
      },
    });
  }, 300_000);
  afterAll(async () => {
    await cluster?.stop();
    await telegram?.close();
    await fake?.close();
  });

  it('drives 200 conversations through 3 instances: 0 lost, 0 duplicated, never overlapping', async () => {
    const db = cluster.db.database;
    // Each API conversation: the user's first two messages reach two instances at once, the
    // third a third instance a moment later, all while the conversation is busy.
    const api = Array.from({ length: API_CONVERSATIONS }, (_, n) => async () => {
      const send = (k: number) =>
        cluster
          .chat((n + k) % INSTANCES, { user: `user-${n}`, text: `c${n} m${k}` })
          .then(async (response) => ({ status: response.status, body: (await response.json()) as Chat }));
      const first = [send(0), send(1)];
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 30));
      return Promise.all([...first, send(2)]);
    });
    // As Telegram does, a delivery that failed on the network is made again (same update id).
    const deliver = async (index: number, update: object) => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await cluster.telegram(index, update);
        } catch (error) {
          if (attempt === 3) throw error;
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
      }
    };
    // Each Telegram chat: its updates spread over the instances, each delivered twice (the
    // platform retries) to two different instances.
    const updates = Array.from({ length: TELEGRAM_CHATS }, (_, chat) => async () => {
      const statuses: number[] = [];
      for (let k = 0; k < MESSAGES; k++) {
        const update = telegramText({
          updateId: 10_000 + chat * MESSAGES + k,
          messageId: 100 + k,
          fromId: TELEGRAM_BASE + chat,
          text: `t${chat} m${k}`,
        });
        const acks = await Promise.all([
          deliver((chat + k) % INSTANCES, update),
          deliver((chat + k + 1) % INSTANCES, update),
        ]);
        statuses.push(...acks.map((ack) => ack.status));
      }
      return statuses;
    });

    const load = Promise.all([pool(40, api), pool(10, updates)]);

    // Meanwhile: a skill written to the shared skills dir, then changed, is served by every instance.
    await mkdir(path.join(cluster.skillsDir, 'scaled'), { recursive: true });
    const file = path.join(cluster.skillsDir, 'scaled', 'probe.md');
    for (const version of ['v1', 'v2']) {
      writeFileSync(file, skillPage(version));
      for (const instance of cluster.instances) {
        await expect
          .poll(
            async () => {
              const response = await fetch(`${instance.url}/api/run`, {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify({ command: 'get_skill scaled' }),
              });
              return ((await response.json()) as { content: string }).content;
            },
            { timeout: 30_000, interval: 200 },
          )
          .toContain(`scaled.probe — Probe skill ${version}`);
      }
    }

    const [apiResults, webhookStatuses] = await load;

    // Every API message answered (none rejected while its conversation was busy), once, with its
    // own reply, and a user's messages — the first two sent to two instances at once — in one conversation.
    apiResults.forEach((replies, n) => {
      replies.forEach(({ status, body }, k) => {
        expect(status, JSON.stringify(body)).toBe(200);
        expect(body.status).toBe('completed');
        expect(body.reply).toBe(`reply to c${n} m${k}`);
      });
      expect(new Set(replies.map(({ body }) => body.conversationId)).size).toBe(1);
    });
    expect(webhookStatuses.flat().every((status) => status === 200)).toBe(true);

    // Telegram: every message answered exactly once through the outbox, whichever instance sent it.
    const deadline = Date.now() + 180_000;
    while (telegram.sent.length < TELEGRAM_CHATS * MESSAGES && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    if (telegram.sent.length !== TELEGRAM_CHATS * MESSAGES) {
      // Say where the missing reply is: an inbound message not done, or an outbox row not sent.
      const stuck = await db.query(
        `SELECT 'inbound' AS kind, id::text, status, attempts::text AS attempts, text FROM inbound_messages WHERE status <> 'done'
         UNION ALL SELECT 'outbox', id::text, status, attempts::text, text FROM outbox_messages WHERE status <> 'sent'`,
      );
      expect(telegram.sent.length, JSON.stringify(stuck)).toBe(TELEGRAM_CHATS * MESSAGES);
    }
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const sent = telegram.sent.map((message) => `${message.chat_id} ${message.text}`).sort();
    const expected = Array.from({ length: TELEGRAM_CHATS }, (_, chat) =>
      Array.from({ length: MESSAGES }, (_, k) => `${TELEGRAM_BASE + chat} reply to t${chat} m${k}`),
    )
      .flat()
      .sort();
    expect(sent).toEqual(expected);

    // The database: one turn per message, each completed with one reply, spread over all instances.
    const total = (API_CONVERSATIONS + TELEGRAM_CHATS) * MESSAGES;
    const turns = await db.query<{ request: string; status: string; conversation_id: string; owner: string }>(
      'SELECT request, status, conversation_id, owner FROM turns',
    );
    expect(turns).toHaveLength(total);
    expect(new Set(turns.map((turn) => turn.request)).size).toBe(total);
    expect(turns.filter((turn) => turn.status !== 'completed')).toEqual([]);
    expect(new Set(turns.map((turn) => turn.conversation_id)).size).toBe(API_CONVERSATIONS + TELEGRAM_CHATS);
    expect(new Set(turns.map((turn) => turn.owner)).size).toBe(INSTANCES);
    const replies = await db.query<{ content: string; count: string }>(
      "SELECT content, count(*) AS count FROM messages WHERE role = 'assistant' GROUP BY content",
    );
    expect(replies).toHaveLength(total);
    expect(replies.filter((reply) => Number(reply.count) !== 1)).toEqual([]);

    // Turns of one conversation never overlap: by the database's clock…
    const overlaps = await db.query<{ conversation_id: string }>(
      `SELECT conversation_id FROM (
         SELECT conversation_id, started_at,
                lag(finished_at) OVER (PARTITION BY conversation_id ORDER BY started_at) AS previous_end
         FROM turns) ordered
       WHERE previous_end > started_at`,
    );
    expect(overlaps).toEqual([]);
    const unfinished = await db.query('SELECT id FROM turns WHERE finished_at IS NULL OR started_at IS NULL');
    expect(unfinished).toEqual([]);
    // …and by the model's: one conversation's model calls never run at the same time.
    const calls = new Map<string, Array<[number, number]>>();
    for (const request of fake.chatRequests) {
      const conversation = ownText(request).split(' ')[0]!;
      expect(request.finishedAt).not.toBeNull();
      calls.set(conversation, [
        ...(calls.get(conversation) ?? []),
        [request.receivedAt, request.finishedAt!],
      ]);
    }
    expect(calls.size).toBe(API_CONVERSATIONS + TELEGRAM_CHATS);
    for (const [conversation, intervals] of calls) {
      intervals.sort((a, b) => a[0] - b[0]);
      for (let index = 1; index < intervals.length; index++) {
        expect(intervals[index]![0], `model calls of ${conversation} overlap`).toBeGreaterThanOrEqual(
          intervals[index - 1]![1],
        );
      }
    }
    // Every turn asked the model (a call retried after a slow answer may be asked twice).
    expect(new Set(fake.chatRequests.map(ownText)).size).toBe(total);
  });
});
