import type { Database } from '../../db/index.ts';
import { countTokens } from '../../llm/index.ts';
import {
  MAX_SEARCH_LIMIT,
  type SearchMemoriesOptions,
  searchMemories,
  touchMemories,
} from './search-memories.ts';

/** Longer messages (a pasted email) are searched by their beginning. */
const MAX_QUERY_CHARS = 2_000;

/**
 * The orchestrator's memory hook: the user's memories most relevant to `text`, best first,
 * as many as fit in `budgetTokens` (each counted as the `- content` line the context shows).
 * Only the memories returned are marked as accessed.
 */
export async function memoriesForContext(
  db: Database,
  userId: string,
  text: string,
  budgetTokens: number,
  options: Omit<SearchMemoriesOptions, 'touch'> = {},
): Promise<string[]> {
  const query = text.trim().slice(0, MAX_QUERY_CHARS);
  if (budgetTokens <= 0 || !query) return [];
  const { results } = await searchMemories(
    db,
    userId,
    { query, limit: MAX_SEARCH_LIMIT },
    { ...options, touch: false },
  );
  const chosen: { id: string; content: string }[] = [];
  let used = 0;
  for (const { memory } of results) {
    const cost = countTokens(`- ${memory.content}\n`);
    if (used + cost > budgetTokens) continue;
    chosen.push({ id: memory.id, content: memory.content });
    used += cost;
  }
  await touchMemories(
    db,
    userId,
    chosen.map((memory) => memory.id),
    options.now ?? new Date(),
  );
  return chosen.map((memory) => memory.content);
}
