import type { Database } from '../../db/index.ts';
import { toIso } from './rows.ts';

/** A stored message as a search shows it: what was said, when, in which conversation, by whom. */
export type FoundMessage = {
  id: string;
  conversationId: string;
  /** The conversation's title (imported conversations have one), else null. */
  conversationTitle: string | null;
  /** Where the conversation happened: `telegram`, `web`, `import:chatgpt`… */
  channel: string;
  role: 'user' | 'assistant';
  /** Who wrote it when the message says (imported chats); otherwise the role tells. */
  speaker: string | null;
  content: string;
  createdAt: string;
};

/** The user's messages `ids` (as text), by id; another user's are never returned. */
export async function loadFoundMessages(
  db: Database,
  userId: string,
  ids: readonly string[],
): Promise<Map<string, FoundMessage>> {
  if (ids.length === 0) return new Map();
  const rows = await db.query<{
    id: string;
    conversation_id: string;
    title: string | null;
    channel: string;
    role: 'user' | 'assistant';
    speaker: string | null;
    content: string;
    created_at: unknown;
  }>(
    `SELECT g.id::text AS id, g.conversation_id, c.title, c.channel, g.role, g.speaker, g.content, g.created_at
     FROM messages g JOIN conversations c ON c.id = g.conversation_id AND c.user_id = g.user_id
     WHERE g.user_id = $1 AND g.id = ANY($2::bigint[])`,
    [userId, [...ids]],
  );
  return new Map(
    rows.map((row) => [
      row.id,
      {
        id: row.id,
        conversationId: row.conversation_id,
        conversationTitle: row.title,
        channel: row.channel,
        role: row.role,
        speaker: row.speaker,
        content: row.content,
        createdAt: toIso(row.created_at) ?? '',
      },
    ]),
  );
}
