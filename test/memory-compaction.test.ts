import { afterAll, beforeAll, expect, it } from 'vitest';
import { openTurnIds } from '../src/agents/index.ts';
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
    "INSERT INTO turns (id, conversation_id, user_id, status, mode, request) VALUES ($1, $2, 'local', $3, 'multi_agent', '')",
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

const fold = (summary: string) => ({ text: JSON.stringify({ summary }) });
const nothing = () => ({ text: JSON.stringify({ topic_changed: false, memory: null }) });
const long = (label: string) => `${label}: ${'many details about this matter '.repeat(20)}`;

describeEachBackend('compaction', (getDb) => {
  const deps = (saved: ExtractedMemory[] | null = [], budget = 500, history = 6_000) => ({
    database: getDb(),
    llm: fakeLlmClient(fake),
    logger: silentLogger(),
    budgetTokens: () => budget,
    historyBudgetTokens: () => history,
    openTurnIds,
    ...(saved
      ? {
          saveMemory: async ({ memory }: { memory: ExtractedMemory }) => {
            saved.push(memory);
          },
        }
      : {}),
  });
  const conversation = async (id: string) => {
    await getDb().query("INSERT INTO conversations (id, user_id, channel) VALUES ($1, 'local', 'cli')", [id]);
    return id;
  };
  const summaryOf = async (id: string) =>
    (
      await getDb().query<{ summary: string; summary_version: number }>(
        'SELECT summary, summary_version FROM conversations WHERE id = $1',
        [id],
      )
    )[0]!;

  it('leaves the history alone while it fits its budget, so the prompt only grows at its end', async () => {
    const id = await conversation('c-fits');
    await storeTurn(getDb(), id, 'My sister Ana visits on Friday', 'Noted.');
    await storeTurn(getDb(), id, 'Book a table for two', 'Which restaurant?');
    expect(await compactConversation(deps(null), id)).toBe(0);
    expect(await summaryOf(id)).toEqual({ summary: '', summary_version: 0 });
    fake.assertDone();
  });

  it('folds the oldest turns into a new summary version once the history is over its budget', async () => {
    const id = await conversation('c-fold');
    await storeTurn(getDb(), id, long('Ana'), 'Noted.');
    await storeTurn(getDb(), id, long('Restaurant'), 'Which restaurant?');
    await storeTurn(getDb(), id, 'And flowers', 'Which ones?');
    fake.enqueue(fold('Ana (sister) visits Friday; a table for two is wanted.'));
    // Each long turn is ~110 tokens: 200 is exceeded, and folding stops at half of it.
    expect(await compactConversation(deps(null, 500, 200), id)).toBe(2);
    const shown = fake.chatRequests.at(-1)!.body.messages!.at(-1)!.content as string;
    expect(shown).toContain('Ana:');
    expect(shown).toContain('Restaurant:');
    expect(shown).not.toContain('And flowers');
    expect(await summaryOf(id)).toEqual({
      summary: 'Ana (sister) visits Friday; a table for two is wanted.',
      summary_version: 1,
    });
    const versions = await getDb().query(
      'SELECT version FROM conversation_summaries WHERE conversation_id = $1',
      [id],
    );
    expect(versions).toHaveLength(1);
    expect(await compactConversation(deps(null, 500, 200), id)).toBe(0);
    fake.assertDone();
  });

  it('never folds or reads past a running turn', async () => {
    const id = await conversation('c-running');
    await storeTurn(getDb(), id, long('still working'), '', 'running');
    expect(await compactConversation(deps([], 500, 10), id)).toBe(0);
    fake.assertDone();
  });

  it('asks once more for an over-budget summary, then cuts it at a sentence boundary', async () => {
    const id = await conversation('c-budget');
    await storeTurn(getDb(), id, long('Tell me everything'), 'Here is a lot.');
    await storeTurn(getDb(), id, 'ok', 'ok');
    const text = Array.from({ length: 80 }, (_, index) => `Fact number ${index} is important.`).join(' ');
    fake.enqueue(fold(text), fold(text));
    await compactConversation(deps(null, 60, 100), id);
    const row = await summaryOf(id);
    expect(countTokens(row.summary)).toBeLessThanOrEqual(60);
    expect(row.summary).toMatch(/important\.$/);
    expect(fake.chatRequests.at(-1)!.body.messages!.at(-1)!.content).toContain('the limit is 60');
    fake.assertDone();
  });

  it('extracts a memory from every finished turn once, without folding', async () => {
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
    fake.enqueue({ text: JSON.stringify({ topic_changed: true, memory }) });
    const saved: ExtractedMemory[] = [];
    await compactConversation(deps(saved), id);
    expect(saved).toEqual([memory]);
    await storeTurn(getDb(), id, 'thanks', 'You are welcome.');
    fake.enqueue(nothing());
    await compactConversation(deps(saved), id);
    expect(saved).toHaveLength(1);
    const shown = fake.chatRequests.at(-1)!.body.messages!.at(-1)!.content as string;
    expect(shown).toContain('user: thanks');
    expect(shown).not.toContain('aisle seats');
    expect((await summaryOf(id)).summary_version).toBe(0);
    fake.assertDone();
  });

  it('fails without losing the turn when the model answers garbage, and succeeds on retry', async () => {
    const id = await conversation('c-garbage');
    await storeTurn(getDb(), id, 'Remember the door code 4412', 'Will do.');
    fake.enqueue({ text: 'sure! here is your summary' });
    await expect(compactConversation(deps(), id)).rejects.toThrow(/JSON/);
    fake.enqueue(nothing());
    await compactConversation(deps(), id);
    expect(fake.chatRequests.at(-1)!.body.messages!.at(-1)!.content).toContain('door code 4412');
    fake.assertDone();
  });
});

it('cutToBudget keeps whole sentences', () => {
  const text = 'One sentence here. Two sentences here. Three sentences here.';
  const cut = cutToBudget(text, 8);
  expect(cut).toBe('One sentence here.');
});
