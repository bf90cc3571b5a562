import { expect, it } from 'vitest';
import { finishTurn, queueTurn, turnsToRun } from '../src/agents/turns.ts';
import { createDbUsageRecorder } from '../src/llm/index.ts';
import {
  appendMessage,
  conversationFromJson,
  createConversation,
  findLatestConversation,
  HistoryWindows,
  latestConversationJsonSql,
  messagesOfTurn,
  recentMessages,
} from '../src/memory/index.ts';
import { ensureUser, ensureUserWith } from '../src/users/index.ts';
import { describeEachBackend } from './support/db.ts';

/*
 * The turn's statements that read or write several folders' tables in one round trip give what
 * the separate reads and writes they replace gave.
 */
describeEachBackend('turn statements', (getDb) => {
  it('ends a turn with its reply and the usage of every call the turn made, earlier attempts included', async () => {
    const db = getDb();
    await ensureUser(db, 'ada');
    const conversation = await createConversation(db, 'ada', 'api');
    const queue = (id: string) =>
      queueTurn(db, {
        id,
        conversationId: conversation.id,
        userId: 'ada',
        mode: 'direct',
        request: 'hi',
        channel: 'api',
        channelMessageId: null,
        owner: 'instance-1',
      });
    const { turn } = await queue('t-end');
    await queue('t-other');
    const record = createDbUsageRecorder(db);
    const call = (turnId: string, promptTokens: number, cost: number) =>
      record({
        turnId,
        conversationId: conversation.id,
        userId: 'ada',
        role: 'orchestrator',
        model: 'm',
        usage: { promptTokens, cachedTokens: 1, cacheWriteTokens: 2, completionTokens: 3, cost },
        latencyMs: 5,
      });
    // One call before a crash, one after the turn ran again, and another turn's call.
    await call(turn.id, 100, 0.25);
    await call(turn.id, 20, 0.5);
    await call('t-other', 7, 1);

    const usage = await finishTurn(
      db,
      { id: turn.id, conversationId: conversation.id, userId: 'ada' },
      {
        status: 'completed',
        reply: 'Done: two calls.',
        stopReason: 'reply',
        error: null,
        state: null,
        receipts: [],
      },
    );

    const expected = {
      promptTokens: 120,
      cachedTokens: 2,
      cacheWriteTokens: 4,
      completionTokens: 6,
      cost: 0.75,
    };
    expect(usage).toEqual(expected);
    const [row] = await db.query<Record<string, unknown>>(
      `SELECT status, reply, stop_reason, prompt_tokens, cached_tokens, cache_write_tokens, completion_tokens, cost,
              finished_at IS NOT NULL AS finished
       FROM turns WHERE id = $1`,
      [turn.id],
    );
    expect(row).toEqual({
      status: 'completed',
      reply: 'Done: two calls.',
      stop_reason: 'reply',
      prompt_tokens: 120,
      cached_tokens: 2,
      cache_write_tokens: 4,
      completion_tokens: 6,
      cost: 0.75,
      finished: true,
    });
    const stored = await messagesOfTurn(db, turn.id);
    expect(stored.map((message) => [message.role, message.content])).toEqual([
      ['assistant', 'Done: two calls.'],
    ]);
    expect(stored[0]!.tokenCount).toBeGreaterThan(0);
  });

  it("reads a conversation's history with its open turns as recentMessages reads it", async () => {
    const db = getDb();
    await ensureUser(db, 'bo');
    const conversation = await createConversation(db, 'bo', 'api');
    const ids: number[] = [];
    for (let index = 0; index < 6; index++) {
      const role = index % 2 ? 'assistant' : 'user';
      ids.push(
        (
          await appendMessage(db, {
            conversationId: conversation.id,
            userId: 'bo',
            role,
            content: `m${index}`,
          })
        ).id,
      );
    }
    const { turn } = await queueTurn(db, {
      id: 't-open',
      conversationId: conversation.id,
      userId: 'bo',
      mode: 'direct',
      request: 'next',
      channel: 'api',
      channelMessageId: null,
      owner: 'instance-1',
    });

    const read = await turnsToRun(db, conversation.id, turn.seq, {
      afterId: ids[0]!,
      limit: 3,
      windows: new HistoryWindows(),
    });

    expect(read.open.map((open) => open.id)).toEqual(['t-open']);
    expect(read.open[0]!.queuedAt).toBeInstanceOf(Date);
    expect(read.stored).toEqual(await recentMessages(db, conversation.id, { afterId: ids[0]!, limit: 3 }));
    expect(read.stored!.map((message) => message.content)).toEqual(['m3', 'm4', 'm5']);
    expect((await turnsToRun(db, conversation.id, turn.seq)).stored).toBeUndefined();
  });

  it('reads a user with their latest conversation on a channel, and creates a user it does not know', async () => {
    const db = getDb();
    const latestOn = (channel: string) => ({ sql: latestConversationJsonSql(1, 2), params: [channel] });
    const created = await ensureUserWith(db, 'cy', latestOn('api'));
    expect(created).toEqual({ user: await ensureUser(db, 'cy'), alongside: undefined });

    const none = await ensureUserWith(db, 'cy', latestOn('api'));
    expect(conversationFromJson(none.alongside)).toBeNull();
    await createConversation(db, 'cy', 'api');
    const newest = await createConversation(db, 'cy', 'api');
    await appendMessage(db, {
      conversationId: newest.id,
      userId: 'cy',
      role: 'assistant',
      content: 'a note',
    });

    const found = await ensureUserWith(db, 'cy', latestOn('api'));
    expect(found.user).toEqual(await ensureUser(db, 'cy'));
    expect(conversationFromJson(found.alongside)).toEqual(await findLatestConversation(db, 'cy', 'api'));
    expect(conversationFromJson(found.alongside)?.id).toBe(newest.id);
    await expect(ensureUserWith(db, '../x', latestOn('api'))).rejects.toThrow('not a valid user id');
  });
});
