import type { Queryable } from '../db/index.ts';
import { type Conversation, createConversation, getConversation } from './conversations.ts';

/**
 * The user's most recently active conversation on any channel, or a new one on `fallbackChannel`
 * (where a message for a user with no chat channel waits until they next open it).
 */
export async function latestUserConversation(
  db: Queryable,
  userId: string,
  fallbackChannel: string,
): Promise<Conversation> {
  const rows = await db.query<{ id: string }>(
    // Imported histories (channel import:…) are read, never written to.
    `SELECT id FROM conversations WHERE user_id = $1 AND channel NOT LIKE 'import:%'
     ORDER BY updated_at DESC, created_at DESC LIMIT 1`,
    [userId],
  );
  const found = rows[0] ? await getConversation(db, userId, rows[0].id) : null;
  return found ?? createConversation(db, userId, fallbackChannel);
}
