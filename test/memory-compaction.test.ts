import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../src/db/index.ts';
import { countTokens } from '../src/llm/tokens.ts';
import { silentLogger } from '../src/logging/logger.ts';
import { compactConversation, cutToBudget, type ExtractedMemory } from '../src/memory/compaction.ts';
import { describeEachBackend } from './support/db.ts';
import { type FakeLlm, fakeLlmClient, startFakeLlm } from './support/fake-llm.ts';

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake.close();
});

let counter = 0;
async function storeTurn(
  database: Database,
  conversationId: string,
  user: string,
  assistant: string,
  status = 'completed',
) {
  const turnId = `turn-${++counter}`;
  await database.query(
    "INSERT INTO turns (id, conversation_id, user_id, status, mode) VALUES ($1, $2, 'local', $3, 'multi_agent')",
    [turnId, conversationId, status],
  );
  for (const [role, content] of [
    ['user', user],
    ['assistant', assistant],
  ]) {
    await database.query(
      "INSERT INTO messages (conversation_id, user_id, turn_id, role, content) VALUES ($1, 'local', $2, $3, $4)",
      [conversationId, turnId, role, content],
    );
  }
  return turnId;
}

const answer = (summary: string, extra: object = {}) => ({
  text: JSON.stringify({ summary, topic_changed: false, memory: null, ...extra }),
});

describeEachBackend('compaction', (getDb) => {
  const deps = (saved: ExtractedMemory[] = [], budget = 500) => ({
    database: getDb(),
    llm: fakeLlmClient(fake),
    logger: silentLogger(),
    budgetTokens: () => budget,
    saveMemory: async ({ memory }: { memory: ExtractedMemory }) => {
      saved.push(memory);
    },
  });
  const conversation = async (id: string) => {
    await getDb().query("INSERT INTO conversations (id, user_id, channel) VALUES ($1, 'local', 'cli')", [id]);
    return id;
  };

  it('folds each finished turn into a new summary version', async () => {
    const id = await conversation('c-fold');
    await storeTurn(getDb(), id, 'My sister Ana visits on Friday', 'Noted.');
    await storeTurn(getDb(), id, 'Book a table for two', 'Which restaurant?');
    fake.enqueue(
      answer('Ana (sister) visits Friday.'),
      answer('Ana visits Friday; user wants a table for two.'),
    );
    expect(await compactConversation(deps(), id)).toBe(2);
    const second = fake.chatRequests.at(-1)!.body.messages!.at(-1)!.content as string;
    expect(second).toContain('Ana (sister) visits Friday.');
    expect(second).toContain('Book a table for two');
    const [row] = await getDb().query<{ summary: string; summary_version: number }>(
      'SELECT summary, summary_version FROM conversations WHERE id = $1',
      [id],
    );
    expect(row).toEqual({ summary: 'Ana visits Friday; user wants a table for two.', summary_version: 2 });
    const versions = await getDb().query(
      'SELECT version FROM conversation_summaries WHERE conversation_id = $1',
      [id],
    );
    expect(versions).toHaveLength(2);
    expect(await compactConversation(deps(), id)).toBe(0);
    fake.assertDone();
  });

  it('never folds a running turn', async () => {
    const id = await conversation('c-running');
    await storeTurn(getDb(), id, 'still working', '', 'running');
    expect(await compactConversation(deps(), id)).toBe(0);
  });

  it('asks once more for an over-budget summary, then cuts it at a sentence boundary', async () => {
    const id = await conversation('c-budget');
    await storeTurn(getDb(), id, 'Tell me everything', 'Here is a lot.');
    const long = Array.from({ length: 80 }, (_, index) => `Fact number ${index} is important.`).join(' ');
    fake.enqueue(answer(long), answer(long));
    await compactConversation(deps([], 60), id);
    const [row] = await getDb().query<{ summary: string }>(
      'SELECT summary FROM conversations WHERE id = $1',
      [id],
    );
    expect(countTokens(row!.summary)).toBeLessThanOrEqual(60);
    expect(row!.summary).toMatch(/important\.$/);
    expect(fake.chatRequests.at(-1)!.body.messages!.at(-1)!.content).toContain('the limit is 60');
    fake.assertDone();
  });

  it('hands an extracted memory to the store when the topic changed', async () => {
    const id = await conversation('c-memory');
    await storeTurn(getDb(), id, 'I prefer aisle seats on flights', 'Got it.');
    const memory = {
      content: 'Prefers aisle seats on flights',
      tags: ['travel'],
      category: 'preference',
      importance: 0.7,
      entities: [],
      relations: [],
    };
    fake.enqueue(answer('User prefers aisle seats.', { topic_changed: true, memory }));
    const saved: ExtractedMemory[] = [];
    await compactConversation(deps(saved), id);
    expect(saved).toEqual([memory]);
  });

  it('fails without losing the turn when the model answers garbage, and succeeds on retry', async () => {
    const id = await conversation('c-garbage');
    await storeTurn(getDb(), id, 'Remember the door code 4412', 'Will do.');
    fake.enqueue({ text: 'sure! here is your summary' });
    await expect(compactConversation(deps(), id)).rejects.toThrow(/JSON/);
    const [before] = await getDb().query<{ summary_version: number }>(
      'SELECT summary_version FROM conversations WHERE id = $1',
      [id],
    );
    expect(before!.summary_version).toBe(0);
    fake.enqueue(answer('Door code is 4412.'));
    expect(await compactConversation(deps(), id)).toBe(1);
  });
});

it('cutToBudget keeps whole sentences', () => {
  const text = 'One sentence here. Two sentences here. Three sentences here.';
  const cut = cutToBudget(text, 8);
  expect(cut).toBe('One sentence here.');
});
