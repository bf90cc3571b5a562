import { z } from 'zod';
import type { Database } from '../db/index.ts';
import { StewardError } from '../errors.ts';
import { countTokens, truncateToTokens } from '../llm/tokens.ts';
import type { ChatMessage, LlmClient } from '../llm/types.ts';
import type { Logger } from '../logging/logger.ts';
import { ENTITY_KINDS, MEMORY_CATEGORIES } from './store/index.ts';

/** What the compaction model must answer: strict JSON. */
export const compactionAnswer = z.object({
  summary: z.string(),
  topic_changed: z.boolean(),
  memory: z
    .object({
      content: z.string().min(1),
      tags: z.array(z.string()).default([]),
      category: z.enum(MEMORY_CATEGORIES).default('fact'),
      importance: z.number().min(0).max(1).default(0.5),
      entities: z
        .array(z.object({ name: z.string().min(1), kind: z.enum(ENTITY_KINDS).default('other') }))
        .default([]),
      relations: z
        .array(
          z.object({ source: z.string().min(1), target: z.string().min(1), relation: z.string().min(1) }),
        )
        .default([]),
    })
    .nullish(),
});
export type CompactionAnswer = z.infer<typeof compactionAnswer>;
export type ExtractedMemory = NonNullable<CompactionAnswer['memory']>;

const SYSTEM = (
  budget: number,
) => `You maintain the running summary of a conversation between a user and their assistant, Steward.
You get the summary so far and the newest turn. Return the new summary: fold the turn in, keep every fact, decision, commitment, open question and result that may matter later (ids, names, dates), drop chit-chat. At most ${budget} tokens.

Also decide whether this turn moved to a new topic. When it did, or when the turn states something worth remembering long-term about the user (a preference, fact, decision, goal, relationship or standing instruction), extract it as one memory with the people, organizations, projects or places it names.

Answer with only JSON:
{"summary": "...", "topic_changed": true|false, "memory": null | {"content": "...", "tags": ["..."], "category": "preference|fact|decision|goal|relationship|context|instruction", "importance": 0.0-1.0, "entities": [{"name": "...", "kind": "person|organization|project|place|topic|other"}], "relations": [{"source": "...", "target": "...", "relation": "..."}]}}`;

/** Where extracted memories go: the de-duplicating save and the entity graph. */
export type MemorySink = (request: {
  userId: string;
  conversationId: string;
  memory: ExtractedMemory;
}) => Promise<void>;

export type CompactionDeps = {
  database: Database;
  llm: LlmClient;
  logger: Logger;
  budgetTokens: () => number;
  saveMemory?: MemorySink;
};

type TurnRow = { turn_id: string; status: string; user_id: string };
type MessageRow = { id: number; turn_id: string | null; role: string; content: string; tool_calls: unknown };

/** Cuts text to the budget at the last sentence boundary that fits (DESIGN invariant 7). */
export function cutToBudget(text: string, budget: number): string {
  if (countTokens(text) <= budget) return text;
  const cut = truncateToTokens(text, budget);
  const boundary = Math.max(
    cut.lastIndexOf('. '),
    cut.lastIndexOf('.\n'),
    cut.lastIndexOf('! '),
    cut.lastIndexOf('? '),
  );
  const result = boundary > cut.length / 3 ? cut.slice(0, boundary + 1) : cut;
  // truncateToTokens decodes a prefix of the tokens, so the result is within budget; keep the guarantee explicit.
  return countTokens(result) <= budget ? result.trim() : truncateToTokens(result, budget - 1).trim();
}

function transcript(messages: MessageRow[]): string {
  return messages
    .map((message) => {
      const text = message.content.length > 800 ? `${message.content.slice(0, 800)}…` : message.content;
      if (message.role === 'tool') return `[tool result] ${text}`;
      if (message.role === 'assistant' && message.tool_calls) {
        const calls = (message.tool_calls as Array<{ name: string; rawArguments?: string }>)
          .map((call) => `${call.name} ${call.rawArguments ?? ''}`)
          .join('; ');
        return `[assistant action] ${calls}${text ? ` — ${text}` : ''}`;
      }
      return `${message.role}: ${text}`;
    })
    .filter((line) => line.trim())
    .join('\n');
}

function parseAnswer(text: string): CompactionAnswer {
  let raw: unknown;
  try {
    raw = JSON.parse(/\{[\s\S]*\}/.exec(text)?.[0] ?? text);
  } catch {
    throw new StewardError('compaction_bad_json', 'the compaction model did not answer with JSON');
  }
  const parsed = compactionAnswer.safeParse(raw);
  if (!parsed.success) {
    throw new StewardError(
      'compaction_bad_json',
      `the compaction answer is not {summary, topic_changed, memory?}: ${parsed.error.issues[0]?.message}`,
    );
  }
  return parsed.data;
}

/**
 * Folds every finished turn not yet in the summary into it, one turn at a time:
 * summary(n) = LLM(summary(n−1), turn(n)), within the token budget, each a new version.
 * Throws on failure (the job retries with backoff); a turn is never lost, because the
 * summary only advances past a turn once its fold is stored.
 */
export async function compactConversation(
  deps: CompactionDeps,
  conversationId: string,
  signal?: AbortSignal,
): Promise<number> {
  const { database } = deps;
  let folded = 0;
  for (;;) {
    const [conversation] = await database.query<{
      summary: string;
      summary_version: number;
      summary_through_message_id: number;
      user_id: string;
    }>(
      'SELECT summary, summary_version, summary_through_message_id, user_id FROM conversations WHERE id = $1',
      [conversationId],
    );
    if (!conversation) return folded;
    const next = await database.query<TurnRow>(
      `SELECT m.turn_id, t.status, t.user_id FROM messages m JOIN turns t ON t.id = m.turn_id
       WHERE m.conversation_id = $1 AND m.id > $2 ORDER BY m.id LIMIT 1`,
      [conversationId, conversation.summary_through_message_id],
    );
    const turn = next[0];
    if (!turn || turn.status === 'running') return folded;
    // Everything up to the turn's last message: a message sent while the turn ran (queued
    // for the next turn) is folded here rather than skipped, so nothing is lost.
    const messages = await database.query<MessageRow>(
      `SELECT id, turn_id, role, content, tool_calls FROM messages
       WHERE conversation_id = $1 AND id > $3
         AND id <= (SELECT max(id) FROM messages WHERE conversation_id = $1 AND turn_id = $2)
       ORDER BY id`,
      [conversationId, turn.turn_id, conversation.summary_through_message_id],
    );
    const throughId = messages.at(-1)!.id;
    const budget = deps.budgetTokens();
    const request: ChatMessage[] = [
      { role: 'system', content: SYSTEM(budget) },
      {
        role: 'user',
        content: `Summary so far:\n${conversation.summary || '(empty: this is the first turn)'}\n\nNewest turn:\n${transcript(messages)}`,
      },
    ];
    const context = { conversationId, userId: conversation.user_id, turnId: turn.turn_id };
    const first = await deps.llm.chat({
      role: 'compaction',
      messages: request,
      json: true,
      temperature: 0,
      signal,
      context,
    });
    let answer = parseAnswer(first.text);
    let model = first.model;
    if (countTokens(answer.summary) > budget) {
      const retry = await deps.llm.chat({
        role: 'compaction',
        messages: [
          ...request,
          { role: 'assistant', content: first.text },
          {
            role: 'user',
            content: `That summary is ${countTokens(answer.summary)} tokens; the limit is ${budget}. Shorten it, keeping what matters most. Same JSON.`,
          },
        ],
        json: true,
        temperature: 0,
        signal,
        context,
      });
      const shorter = parseAnswer(retry.text);
      answer = { ...shorter, memory: shorter.memory ?? answer.memory };
      model = retry.model;
    }
    const summary = cutToBudget(answer.summary.trim(), budget);
    if (answer.topic_changed && answer.memory && deps.saveMemory) {
      await deps.saveMemory({ userId: conversation.user_id, conversationId, memory: answer.memory });
    }
    await database.transaction(async (tx) => {
      const version = conversation.summary_version + 1;
      await tx.query(
        `INSERT INTO conversation_summaries (conversation_id, version, summary, token_count, model, through_message_id, topic_changed)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [conversationId, version, summary, countTokens(summary), model, throughId, answer.topic_changed],
      );
      await tx.query(
        `UPDATE conversations SET summary = $2, summary_version = $3, summary_model = $4, summary_updated_at = now(),
           summary_through_message_id = $5 WHERE id = $1 AND summary_version = $6`,
        [conversationId, summary, version, model, throughId, conversation.summary_version],
      );
    });
    folded++;
    deps.logger.debug({ conversationId, turnId: turn.turn_id }, 'conversation compacted');
  }
}
