/*
 * SQL that another folder composes into a statement of its own: agents/ claims a turn — the turn
 * marked running, its user message stored, the conversation touched — in one statement (one
 * round trip on the hot path, and a claim that either happened whole or not at all), and ends it
 * the same way (its reply stored with the turn's end), while the SQL naming this folder's tables
 * stays here. `$n` are parameter positions of the composed
 * statement; `source` and `guard` name CTEs of it.
 */

/** Where each value of the user message sits among the composed statement's parameters. */
export type UserMessageParams = {
  conversationId: number;
  userId: number;
  turnId: number;
  content: number;
  context: number;
  tokenCount: number;
  channel: number;
  channelMessageId: number;
};

/** A CTE body that stores the turn's user message once per row of `source` and returns its `id`. */
export function insertUserMessageSql(source: string, at: UserMessageParams): string {
  return `INSERT INTO messages (conversation_id, user_id, turn_id, role, content, context, token_count, channel, channel_message_id)
       SELECT $${at.conversationId}, $${at.userId}, $${at.turnId}, 'user', $${at.content}, $${at.context},
         $${at.tokenCount}, $${at.channel}, $${at.channelMessageId}
       FROM ${source} RETURNING id`;
}

/** A CTE body that marks the conversation active now, when `guard` has a row. */
export function touchConversationSql(conversationId: number, guard: string): string {
  return `UPDATE conversations SET updated_at = now() WHERE id = $${conversationId} AND EXISTS (SELECT 1 FROM ${guard})`;
}

/** Where each value of a turn's reply sits among the composed statement's parameters. */
export type ReplyMessageParams = {
  conversationId: number;
  userId: number;
  turnId: number;
  content: number;
  tokenCount: number;
};

/**
 * A CTE body that stores the turn's reply (its last assistant message) and returns its `id`. Like
 * any message of a turn after its user message, it leaves the conversation's activity time alone.
 */
export function insertReplyMessageSql(at: ReplyMessageParams): string {
  return `INSERT INTO messages (conversation_id, user_id, turn_id, role, content, token_count)
       VALUES ($${at.conversationId}, $${at.userId}, $${at.turnId}, 'assistant', $${at.content}, $${at.tokenCount})
       RETURNING id`;
}
