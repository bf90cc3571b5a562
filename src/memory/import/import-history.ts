import { createHash } from 'node:crypto';
import type { Database } from '../../db/index.ts';
import type { HistoryFormat, HistoryMessage } from './history.ts';

export type ImportSummary = {
  /** Messages stored now. */
  added: number;
  /** Messages already stored by an earlier import (of this user): nothing to do. */
  duplicates: number;
  /** Conversations the messages belong to (new or already there). */
  conversations: number;
};

const digest = (...parts: string[]) => createHash('sha256').update(parts.join('\u0000')).digest('hex');

/** The conversation an export's conversation becomes for `userId`: the same every import. */
export function importedConversationId(userId: string, format: HistoryFormat, conversation: string): string {
  return `imp_${digest(userId, format, conversation).slice(0, 24)}`;
}

/**
 * Stores an imported history as `userId`'s conversations (channel `import:<format>`) and
 * messages, searchable like any other (memory.search). Idempotent: a message is keyed by the
 * user, the format, its conversation and its id, so importing the same export twice — or a
 * later export of the same chat — adds only what is new. A conversation's messages are stored
 * in time order; its times are the history's own, so it never passes for the latest chat.
 */
export async function importHistory(
  db: Database,
  userId: string,
  format: HistoryFormat,
  messages: readonly HistoryMessage[],
): Promise<ImportSummary> {
  const byConversation = new Map<string, HistoryMessage[]>();
  for (const message of messages) {
    byConversation.set(message.conversation, [...(byConversation.get(message.conversation) ?? []), message]);
  }
  let added = 0;
  const channel = `import:${format}`;
  for (const [key, group] of byConversation) {
    const sorted = group
      .map((message, index) => ({ message, index }))
      .sort((a, b) => a.message.at.getTime() - b.message.at.getTime() || a.index - b.index)
      .map(({ message }) => message);
    const conversationId = importedConversationId(userId, format, key);
    const first = sorted[0]!.at;
    const last = sorted.at(-1)!.at;
    added += await db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO conversations (id, user_id, channel, title, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (id) DO UPDATE SET
           title = COALESCE(EXCLUDED.title, conversations.title),
           created_at = LEAST(conversations.created_at, EXCLUDED.created_at),
           updated_at = GREATEST(conversations.updated_at, EXCLUDED.updated_at)
         WHERE conversations.user_id = EXCLUDED.user_id`,
        [conversationId, userId, channel, sorted[0]!.title, first, last],
      );
      const inserted = await tx.query<{ id: number }>(
        `INSERT INTO messages (conversation_id, user_id, role, content, speaker, channel, channel_message_id, created_at)
         SELECT $1, $2, m.role, m.content, m.speaker, $3, m.key, m.at
         FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::timestamptz[]) WITH ORDINALITY
           AS m(role, content, speaker, key, at, ord)
         ORDER BY m.ord
         ON CONFLICT (channel, channel_message_id) WHERE channel_message_id IS NOT NULL DO NOTHING
         RETURNING id`,
        [
          conversationId,
          userId,
          channel,
          sorted.map((message) => message.role),
          sorted.map((message) => message.text),
          sorted.map((message) => message.speaker),
          sorted.map((message) => digest(userId, format, key, message.id)),
          sorted.map((message) => message.at),
        ],
      );
      return inserted.length;
    });
  }
  return { added, duplicates: messages.length - added, conversations: byConversation.size };
}
