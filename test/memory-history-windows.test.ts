import { expect, it } from 'vitest';
import type { Database } from '../src/db/index.ts';
import {
  appendMessage,
  createConversation,
  HistoryWindows,
  recentMessages,
  setMessageContext,
} from '../src/memory/index.ts';
import { ensureUser } from '../src/users/index.ts';
import { describeEachBackend } from './support/db.ts';

/*
 * A history read through HistoryWindows is always the history read whole: whatever happened to
 * the conversation's messages between two reads (added, changed, deleted, folded into the
 * summary, another instance's turns), and whatever it could keep.
 */
describeEachBackend('history windows', (getDb) => {
  let counter = 0;
  async function conversationWith(db: Database, count: number) {
    const user = `hw${++counter}`;
    await ensureUser(db, user);
    const conversation = await createConversation(db, user, 'api');
    const add = async (content: string) =>
      (await appendMessage(db, { conversationId: conversation.id, userId: user, role: 'user', content })).id;
    const ids: number[] = [];
    for (let index = 0; index < count; index++) ids.push(await add(`m${index}`));
    return { id: conversation.id, ids, add };
  }

  /** Reads through `windows` and whole, and expects the same. */
  async function expectWhole(
    db: Database,
    windows: HistoryWindows,
    id: string,
    afterId: number,
    limit: number,
  ) {
    const through = await windows.read(db, id, { afterId, limit });
    expect(through).toEqual(await recentMessages(db, id, { afterId, limit }));
    return through;
  }

  it('reads only what was added since the last read, and the same history as a whole read', async () => {
    const db = getDb();
    const windows = new HistoryWindows();
    const conversation = await conversationWith(db, 5);
    await expectWhole(db, windows, conversation.id, 0, 4);
    const added = await conversation.add('m5');

    const [from, through] = windows.keptIds(conversation.id, { afterId: 0, limit: 4 });
    expect([from, through]).toEqual([conversation.ids[1], conversation.ids[4]]);
    const [row] = await db.query<{ history: [string | null, Array<{ id: number }>] }>(
      `SELECT ${HistoryWindows.sql({ conversationId: 1, afterId: 2, limit: 3, from: 4, through: 5 })} AS history`,
      [conversation.id, 0, 4, from, through],
    );
    // The kept messages come back as tags only; the new one whole.
    expect(row!.history[0]!.split(' ').map((tag) => Number(tag.split(':')[0]))).toEqual(
      conversation.ids.slice(1),
    );
    expect(row!.history[1]!.map((message) => message.id)).toEqual([added]);

    const read = await expectWhole(db, windows, conversation.id, 0, 4);
    expect(read.map((message) => message.content)).toEqual(['m2', 'm3', 'm4', 'm5']);
  });

  it('reads the history whole again when a kept message was changed or deleted', async () => {
    const db = getDb();
    const windows = new HistoryWindows();
    const conversation = await conversationWith(db, 6);
    await expectWhole(db, windows, conversation.id, 0, 10);

    await setMessageContext(db, conversation.ids[2]!, '<context>later</context>', 3);
    const changed = await expectWhole(db, windows, conversation.id, 0, 10);
    expect(changed.find((message) => message.id === conversation.ids[2])?.context).toBe(
      '<context>later</context>',
    );

    await db.query('UPDATE messages SET content = $2 WHERE id = $1', [conversation.ids[4], 'edited']);
    await conversation.add('m6');
    expect((await expectWhole(db, windows, conversation.id, 0, 10))[4]!.content).toBe('edited');

    await db.query('DELETE FROM messages WHERE id = $1', [conversation.ids[1]]);
    const deleted = await expectWhole(db, windows, conversation.id, 0, 10);
    expect(deleted.map((message) => message.content)).toEqual(['m0', 'm2', 'm3', 'edited', 'm5', 'm6']);

    // Deleted and written again with the same id and text (as a restore does): read again too.
    const [copy] = await db.query<Record<string, unknown>>('SELECT * FROM messages WHERE id = $1', [
      conversation.ids[3],
    ]);
    await db.query('DELETE FROM messages WHERE id = $1', [conversation.ids[3]]);
    const columns = 'id, conversation_id, user_id, turn_id, role, content, token_count, context, created_at';
    await db.query(
      `INSERT INTO messages (${columns}) OVERRIDING SYSTEM VALUE
       SELECT ${columns} FROM json_populate_record(NULL::messages, $1::json)`,
      [JSON.stringify(copy)],
    );
    await expectWhole(db, windows, conversation.id, 0, 10);

    // A message below the kept ones that became visible after the read (its transaction
    // committed late): a history shorter than its limit sees it.
    const [late] = await db.query<Record<string, unknown>>('SELECT * FROM messages WHERE id = $1', [
      conversation.ids[0],
    ]);
    await db.query('DELETE FROM messages WHERE id = $1', [conversation.ids[0]]);
    expect((await expectWhole(db, windows, conversation.id, 0, 10))[0]!.content).toBe('m2');
    await db.query(
      `INSERT INTO messages (${columns}) OVERRIDING SYSTEM VALUE
       SELECT ${columns} FROM json_populate_record(NULL::messages, $1::json)`,
      [JSON.stringify(late)],
    );
    expect((await expectWhole(db, windows, conversation.id, 0, 10))[0]!.content).toBe('m0');
  });

  it('follows the summary forward, and reads whole when asked for more than it kept', async () => {
    const db = getDb();
    const windows = new HistoryWindows();
    const conversation = await conversationWith(db, 8);
    await expectWhole(db, windows, conversation.id, 0, 5);
    await conversation.add('m8');
    // Compaction folded the summary through m5: the history starts after it.
    const folded = await expectWhole(db, windows, conversation.id, conversation.ids[5]!, 5);
    expect(folded.map((message) => message.content)).toEqual(['m6', 'm7', 'm8']);
    // Back to an earlier point, or a longer window: nothing kept can serve it alone.
    expect((await expectWhole(db, windows, conversation.id, 0, 5)).length).toBe(5);
    expect((await expectWhole(db, windows, conversation.id, 0, 20)).length).toBe(9);
  });

  it('sees what another instance added and changed, and keeps nothing over its size', async () => {
    const db = getDb();
    const mine = new HistoryWindows();
    const theirs = new HistoryWindows();
    const tiny = new HistoryWindows(10);
    const conversation = await conversationWith(db, 3);
    for (const windows of [mine, theirs, tiny]) await expectWhole(db, windows, conversation.id, 0, 50);
    for (let index = 3; index < 60; index++) conversation.ids.push(await conversation.add(`m${index}`));
    await expectWhole(db, theirs, conversation.id, 0, 50);
    await db.query('UPDATE messages SET content = $2 WHERE id = $1', [conversation.ids[30], 'theirs']);
    for (const windows of [mine, theirs, tiny]) {
      const read = await expectWhole(db, windows, conversation.id, 0, 50);
      expect(read.map((message) => message.content).slice(-2)).toEqual(['m58', 'm59']);
      expect(read.find((message) => message.id === conversation.ids[30])?.content).toBe('theirs');
    }
    expect(tiny.keptIds(conversation.id, { afterId: 0, limit: 50 })).toEqual([0, 0]);
    // An empty conversation reads as empty, and then sees its first message.
    const empty = await conversationWith(db, 0);
    expect(await expectWhole(db, mine, empty.id, 0, 50)).toEqual([]);
    await empty.add('first');
    expect((await expectWhole(db, mine, empty.id, 0, 50)).map((message) => message.content)).toEqual([
      'first',
    ]);
  });

  it('keeps the most recently read conversations when they do not all fit', async () => {
    const db = getDb();
    const first = await conversationWith(db, 3);
    const second = await conversationWith(db, 3);
    // Room for one conversation's six characters of text, not two.
    const windows = new HistoryWindows(8);
    await expectWhole(db, windows, first.id, 0, 10);
    await expectWhole(db, windows, second.id, 0, 10);
    expect(windows.keptIds(first.id, { afterId: 0, limit: 10 })).toEqual([0, 0]);
    expect(windows.keptIds(second.id, { afterId: 0, limit: 10 })).toEqual([0, second.ids[2]]);
  });
});
