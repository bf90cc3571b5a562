import { expect, it } from 'vitest';
import { silentLogger } from '../src/logging/logger.ts';
import {
  appendMessage,
  createConversation,
  saveMemory,
  searchMemories,
  searchRecall,
} from '../src/memory/index.ts';
import { searchMemoriesHandler } from '../src/skills/handlers/memory/index.ts';
import type { SkillContext } from '../src/skills/types.ts';
import { ensureUser } from '../src/users/index.ts';
import { describeEachBackend } from './support/db.ts';
import { runHandler } from './support/handlers.ts';

const NOW = new Date('2026-03-11T10:00:00Z');

describeEachBackend('memory recall', (getDb) => {
  let count = 0;
  const newUser = async () => {
    const id = `recall_user_${++count}`;
    await ensureUser(getDb(), id, { timezone: 'UTC' });
    return id;
  };
  /** A conversation of `lines` (alternately the user's and Steward's), each at `at`. */
  const converse = async (userId: string, lines: string[], options: { turnId?: string; at?: Date } = {}) => {
    const conversation = await createConversation(getDb(), userId, 'web');
    const ids: number[] = [];
    for (const [index, content] of lines.entries()) {
      const { id } = await appendMessage(getDb(), {
        conversationId: conversation.id,
        userId,
        role: index % 2 === 0 ? 'user' : 'assistant',
        content,
        turnId: options.turnId ?? null,
      });
      ids.push(id);
    }
    if (options.at) {
      await getDb().query('UPDATE messages SET created_at = $2 WHERE conversation_id = $1', [
        conversation.id,
        options.at,
      ]);
    }
    return { conversation, ids };
  };
  const context = (userId: string, overrides: Partial<SkillContext> = {}): SkillContext => ({
    user: { id: userId, timezone: 'UTC' },
    conversationId: null,
    channel: 'test',
    agentId: null,
    turnId: null,
    executionId: 'exec-test',
    signal: new AbortController().signal,
    services: { database: getDb() },
    logger: silentLogger(),
    now: () => NOW,
    ...overrides,
  });
  const messageTexts = async (userId: string, query: string, options: { now?: Date } = {}) =>
    (
      await searchRecall(getDb(), userId, { query, source: 'messages' }, { now: options.now ?? NOW })
    ).results.map((hit) => (hit.kind === 'message' ? hit.message.content : `memory: ${hit.memory.content}`));

  it('finds what was said in past conversations, the answer by the question before it', async () => {
    const user = await newUser();
    await converse(user, [
      'How long have you had the bakery?',
      'Almost three years now! It started as a market stall.',
      'And the sourdough?',
      'That came a year later.',
    ]);
    await converse(user, ['What is the weather tomorrow?', 'Sunny, 21 degrees.']);
    const found = await messageTexts(user, 'How long has the bakery been open?');
    expect(found.slice(0, 2).sort()).toEqual(
      ['Almost three years now! It started as a market stall.', 'How long have you had the bakery?'].sort(),
    );
    expect(found).not.toContain('Sunny, 21 degrees.');
  });

  it('never returns another user’s messages, nor tool results, nor the current turn', async () => {
    const alice = await newUser();
    const bob = await newUser();
    const { conversation } = await converse(alice, ['The spare key is under the blue flowerpot', 'Noted.']);
    await appendMessage(getDb(), {
      conversationId: conversation.id,
      userId: alice,
      role: 'tool',
      content: 'flowerpot inventory: blue, red',
      toolCallId: 'call_1',
    });
    expect(await messageTexts(bob, 'spare key flowerpot')).toEqual([]);
    const found = await messageTexts(alice, 'flowerpot');
    expect(found[0]).toBe('The spare key is under the blue flowerpot');
    expect(found).not.toContain('flowerpot inventory: blue, red');

    // What the user is asking right now is not an answer to it.
    await converse(alice, ['where is the flowerpot key again?'], { turnId: 'turn_now' });
    const ctx = context(alice, { turnId: 'turn_now' });
    const result = await runHandler(
      searchMemoriesHandler,
      { query: 'flowerpot key', source: 'messages' },
      ctx,
    );
    expect(result.status).toBe('ok');
    expect(result.content).toContain('The spare key is under the blue flowerpot');
    expect(result.content).not.toContain('again?');
    const asBob = await runHandler(searchMemoriesHandler, { query: 'flowerpot key' }, context(bob));
    expect(asBob.content).toMatch(/^No memories or messages match/);
  });

  it('shows when, which conversation and who; mixes memories and messages in one ranking', async () => {
    const user = await newUser();
    await saveMemory(
      getDb(),
      user,
      { content: 'Ana is looking for a flat in Porto', category: 'fact' },
      { now: NOW },
    );
    const { conversation, ids } = await converse(user, [
      'Ana found a flat near the river in Porto',
      'Lovely!',
    ]);
    const all = await runHandler(searchMemoriesHandler, { query: 'Ana flat Porto' }, context(user));
    const lines = all.content.split('\n');
    // The reply beside the message comes with it: it is the message's context.
    expect(lines[0]).toMatch(/^3 results \(1 memory, 2 messages\), best first, for "Ana flat Porto"/);
    const shown = lines.find((line) => line.startsWith(`[message ${ids[0]}] `));
    expect(shown).toMatch(
      new RegExp(
        `^\\[message ${ids[0]}\\] \\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2} · web conversation ${conversation.id} · you: Ana found a flat near the river in Porto$`,
      ),
    );
    expect(lines).toContain(
      lines.find((line) => line.startsWith(`[message ${ids[1]}] `) && line.endsWith(' · Steward: Lovely!')),
    );
    expect(
      lines.some((line) =>
        /^\[m_[0-9a-z]{8}\] Ana is looking for a flat in Porto · fact · importance 0\.50$/.test(line),
      ),
    ).toBe(true);

    const memoriesOnly = await runHandler(
      searchMemoriesHandler,
      { query: 'Ana flat Porto', source: 'memories' },
      context(user),
    );
    expect(memoriesOnly.content.split('\n')[0]).toMatch(/^1 memory, best first/);
    // Memory filters leave messages out, and say so when messages alone are asked for.
    const tagged = await runHandler(
      searchMemoriesHandler,
      { query: 'Ana flat', category: 'fact' },
      context(user),
    );
    expect(tagged.content.split('\n')[0]).toMatch(/^1 memory,/);
    const wrong = await runHandler(
      searchMemoriesHandler,
      { query: 'Ana', source: 'messages', tags: 'x' },
      context(user),
    );
    expect(wrong).toMatchObject({ status: 'error' });
    expect(wrong.content).toContain('--tags only apply to memories');
    // searchMemories stays memories only.
    expect((await searchMemories(getDb(), user, { query: 'Ana flat Porto' })).results).toHaveLength(1);
  });

  it('finds an irregular verb by its other forms (word-form groups)', async () => {
    const user = await newUser();
    for (const content of ['Bought a red bicycle at the market.', 'Sold the old car to a neighbour.'])
      await saveMemory(getDb(), user, { content, category: 'context' }, { now: NOW });
    const found = async (query: string) =>
      (await searchMemories(getDb(), user, { query }, { touch: false, now: NOW })).results.map(
        (hit) => hit.memory.content,
      );
    // "buy" shares no stem with "bought": only the word-form group connects them.
    expect(await found('what did I buy')).toEqual(['Bought a red bicycle at the market.']);
    expect(await found('what did I sell')).toEqual(['Sold the old car to a neighbour.']);
  });

  it('ranks what the named speaker said, and what happened on the days the query names, higher', async () => {
    const user = await newUser();
    const save = (content: string) =>
      saveMemory(getDb(), user, { content, category: 'context' }, { now: NOW });
    await save('[D1:1] (2:00 pm on 3 May, 2023) Ben: I adopted a puppy from the shelter last week.');
    await save('[D1:2] (2:00 pm on 3 May, 2023) Ana: A puppy! I still want to adopt a cat.');
    await save('[D2:1] (9:00 am on 20 June, 2023) Ana: We went to the shelter to adopt our cat, Miso.');
    const ids = async (query: string) =>
      (await searchMemories(getDb(), user, { query }, { touch: false, now: NOW })).results.map((hit) =>
        hit.memory.content.slice(0, 6),
      );
    expect((await ids('What did Ben adopt?'))[0]).toBe('[D1:1]');
    expect((await ids('What did Ana adopt?'))[0]).not.toBe('[D1:1]');
    expect((await ids('What did Ana adopt in June 2023?'))[0]).toBe('[D2:1]');
    expect((await ids('What did Ana adopt on 3 May, 2023?'))[0]).toBe('[D1:2]');

    // Relative times count from now, for messages by when they were written.
    const other = await newUser();
    await converse(other, ['Booked the dentist for Friday'], { at: new Date('2026-03-04T09:00:00Z') });
    await converse(other, ['Booked the dentist for Monday'], { at: new Date('2025-11-02T09:00:00Z') });
    expect((await messageTexts(other, 'when did I book the dentist last week'))[0]).toBe(
      'Booked the dentist for Friday',
    );
    expect((await messageTexts(other, 'dentist in November 2025'))[0]).toBe('Booked the dentist for Monday');
  });

  it('keeps message term statistics exact per user, and numbers each conversation’s searchable messages', async () => {
    const db = getDb();
    const user = await newUser();
    const { conversation } = await converse(user, ['first words here', 'second reply']);
    await appendMessage(db, {
      conversationId: conversation.id,
      userId: user,
      role: 'tool',
      content: 'tool output',
    });
    await appendMessage(db, {
      conversationId: conversation.id,
      userId: user,
      role: 'user',
      content: 'third words',
    });
    const positions = await db.query<{ content: string; position: string | null }>(
      'SELECT content, position::text AS position FROM messages WHERE conversation_id = $1 ORDER BY id',
      [conversation.id],
    );
    expect(positions.map((row) => row.position)).toEqual(['1', '2', null, '3']);
    /** The user's statistics as stored, and as counted from their messages now. */
    const statistics = async () => {
      const stored = await db.query<{ term: string; doc_count: number }>(
        'SELECT term, doc_count FROM message_term_stats WHERE user_id = $1 AND doc_count > 0 ORDER BY term',
        [user],
      );
      const expected = await db.query<{ term: string; doc_count: number }>(
        `SELECT t.lexeme AS term, count(*)::int AS doc_count FROM messages m, unnest(m.search_vector) t
         WHERE m.user_id = $1 GROUP BY t.lexeme ORDER BY t.lexeme`,
        [user],
      );
      const [totals] = await db.query<{ stored: string; expected: string }>(
        `SELECT (SELECT doc_count || '/' || total_length FROM message_user_stats WHERE user_id = $1) AS stored,
           (SELECT count(*) || '/' || sum(length(search_vector)) FROM messages
            WHERE user_id = $1 AND search_vector IS NOT NULL) AS expected`,
        [user],
      );
      expect(stored.map((row) => [row.term, Number(row.doc_count)])).toEqual(
        expected.map((row) => [row.term, Number(row.doc_count)]),
      );
      expect(totals!.stored).toBe(totals!.expected);
      return stored;
    };
    const stored = await statistics();
    expect(stored.find((row) => row.term === 'word')?.doc_count).toBe(2);
    expect(stored.some((row) => row.term === 'tool')).toBe(false);

    // Many rows in one statement (an import), an edit, and a deletion keep them exact too.
    await db.query(
      `INSERT INTO messages (conversation_id, user_id, role, content)
       SELECT $1, $2, r, c FROM unnest($3::text[], $4::text[]) AS x(r, c)`,
      [
        conversation.id,
        user,
        ['user', 'tool', 'assistant', 'user'],
        ['more words here', 'tool words', 'words again', 'fourth'],
      ],
    );
    expect((await statistics()).find((row) => row.term === 'word')?.doc_count).toBe(4);
    await db.query(
      `UPDATE messages SET content = 'edited text' WHERE conversation_id = $1 AND content = 'fourth'`,
      [conversation.id],
    );
    await statistics();
    await db.query(`DELETE FROM messages WHERE conversation_id = $1 AND content LIKE '%words%'`, [
      conversation.id,
    ]);
    expect((await statistics()).some((row) => row.term === 'word')).toBe(false);
  });
});
