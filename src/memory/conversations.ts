import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/index.ts';
import type { ToolCall } from '../llm/index.ts';

export type Conversation = {
  id: string;
  userId: string;
  channel: string;
  mode: string | null;
  summary: string;
  summaryVersion: number;
  /** The last message the summary covers; history starts after it. */
  summaryThroughMessageId: number;
};

export type StoredMessage = {
  id: number;
  turnId: string | null;
  role: 'user' | 'assistant' | 'tool' | 'system';
  content: string;
  toolCalls: ToolCall[] | null;
  toolCallId: string | null;
  tokenCount: number;
  /** User messages: the per-turn context (time, memories) they were sent with. */
  context: string | null;
  createdAt: Date;
};

type ConversationRow = {
  id: string;
  user_id: string;
  channel: string;
  mode: string | null;
  summary: string;
  summary_version: number;
  summary_through_message_id: number;
};

const toConversation = (row: ConversationRow): Conversation => ({
  id: row.id,
  userId: row.user_id,
  channel: row.channel,
  mode: row.mode,
  summary: row.summary,
  summaryVersion: row.summary_version,
  summaryThroughMessageId: row.summary_through_message_id,
});

const CONVERSATION_COLUMNS =
  'id, user_id, channel, mode, summary, summary_version, summary_through_message_id';

/** The conversation, only when it belongs to `userId` (DESIGN invariant 9). */
export async function getConversation(
  db: Queryable,
  userId: string,
  id: string,
): Promise<Conversation | null> {
  const rows = await db.query<ConversationRow>(
    `SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE id = $1 AND user_id = $2`,
    [id, userId],
  );
  return rows[0] ? toConversation(rows[0]) : null;
}

export async function createConversation(
  db: Queryable,
  userId: string,
  channel: string,
  options: { id?: string; mode?: string | null } = {},
): Promise<Conversation> {
  const rows = await db.query<ConversationRow>(
    `INSERT INTO conversations (id, user_id, channel, mode) VALUES ($1, $2, $3, $4) RETURNING ${CONVERSATION_COLUMNS}`,
    [options.id ?? randomUUID(), userId, channel, options.mode ?? null],
  );
  return toConversation(rows[0]!);
}

/** The user's most recently active conversation on `channel`, or a new one. */
export async function latestConversation(
  db: Queryable,
  userId: string,
  channel: string,
): Promise<Conversation> {
  return (await findLatestConversation(db, userId, channel)) ?? createConversation(db, userId, channel);
}

/** The user's (`$userId`) most recently active conversation on the channel (`$channel`): zero or one row. */
const latestConversationSql = (userId: number, channel: number): string =>
  `SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE user_id = $${userId} AND channel = $${channel} ORDER BY updated_at DESC, created_at DESC LIMIT 1`;

/** The user's most recently active conversation on the channel, or null when there is none. */
export async function findLatestConversation(
  db: Queryable,
  userId: string,
  channel: string,
): Promise<Conversation | null> {
  const rows = await db.query<ConversationRow>(latestConversationSql(1, 2), [userId, channel]);
  return rows[0] ? toConversation(rows[0]) : null;
}

/**
 * findLatestConversation as a scalar expression for another folder's statement (one round trip
 * for both): JSON of the conversation or null, for conversationFromJson. `$n` are parameter positions.
 */
export function latestConversationJsonSql(userId: number, channel: number): string {
  return `(SELECT row_to_json(latest) FROM (${latestConversationSql(userId, channel)}) latest)`;
}

/** What latestConversationJsonSql read, as findLatestConversation returns it. */
export function conversationFromJson(json: unknown): Conversation | null {
  return json ? toConversation(json as ConversationRow) : null;
}

export async function setConversationMode(db: Queryable, id: string, mode: string | null): Promise<void> {
  await db.query('UPDATE conversations SET mode = $2, updated_at = now() WHERE id = $1', [id, mode]);
}

export type NewMessage = {
  conversationId: string;
  userId: string;
  turnId?: string | null;
  role: StoredMessage['role'];
  content: string;
  toolCalls?: ToolCall[] | null;
  toolCallId?: string | null;
  tokenCount?: number;
  channel?: string | null;
  channelMessageId?: string | null;
};

/**
 * Stores a message. With a channel message id already stored for that channel, stores
 * nothing and returns `duplicate: true` with the existing id (a redelivered webhook).
 */
export async function appendMessage(
  db: Queryable,
  message: NewMessage,
): Promise<{ id: number; duplicate: boolean }> {
  const rows = await db.query<{ id: number }>(
    `INSERT INTO messages (conversation_id, user_id, turn_id, role, content, tool_calls, tool_call_id, token_count, channel, channel_message_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (channel, channel_message_id) WHERE channel_message_id IS NOT NULL DO NOTHING
     RETURNING id`,
    [
      message.conversationId,
      message.userId,
      message.turnId ?? null,
      message.role,
      message.content,
      message.toolCalls ? JSON.stringify(message.toolCalls) : null,
      message.toolCallId ?? null,
      message.tokenCount ?? 0,
      message.channel ?? null,
      message.channelMessageId ?? null,
    ],
  );
  // A turn's own messages follow its user message, which already marked the conversation
  // active; anything else (a delivered note) does it here.
  if (!message.turnId || message.role === 'user') {
    await db.query('UPDATE conversations SET updated_at = now() WHERE id = $1', [message.conversationId]);
  }
  if (rows[0]) return { id: rows[0].id, duplicate: false };
  const existing = await db.query<{ id: number }>(
    'SELECT id FROM messages WHERE channel = $1 AND channel_message_id = $2',
    [message.channel, message.channelMessageId],
  );
  return { id: existing[0]!.id, duplicate: true };
}

export async function setMessageTurn(db: Queryable, messageId: number, turnId: string): Promise<void> {
  await db.query('UPDATE messages SET turn_id = $2 WHERE id = $1', [messageId, turnId]);
}

/** A `messages` row as read (JSON or rows). */
export type MessageRow = {
  id: number;
  turn_id: string | null;
  role: StoredMessage['role'];
  content: string;
  tool_calls: ToolCall[] | null;
  tool_call_id: string | null;
  token_count: number;
  context: string | null;
  created_at: Date;
};

export const toStoredMessage = (row: MessageRow): StoredMessage => ({
  id: row.id,
  turnId: row.turn_id,
  role: row.role,
  content: row.content,
  toolCalls: row.tool_calls,
  toolCallId: row.tool_call_id,
  tokenCount: row.token_count,
  context: row.context,
  createdAt: new Date(row.created_at),
});

/** Records the per-turn context a user message was sent with; its tokens count toward history. */
export async function setMessageContext(
  db: Queryable,
  messageId: number,
  context: string,
  tokens: number,
): Promise<void> {
  await db.query('UPDATE messages SET context = $2, token_count = token_count + $3 WHERE id = $1', [
    messageId,
    context,
    tokens,
  ]);
}

/** The columns a StoredMessage is made from. */
export const MESSAGE_COLUMNS =
  'id, turn_id, role, content, tool_calls, tool_call_id, token_count, context, created_at';

/** Every message a turn stored, in order. */
export async function messagesOfTurn(db: Queryable, turnId: string): Promise<StoredMessage[]> {
  const rows = await db.query<MessageRow>(
    `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE turn_id = $1 ORDER BY id`,
    [turnId],
  );
  return rows.map(toStoredMessage);
}

/**
 * SQL of a scalar expression: JSON of the newest `$limit` messages of conversation `$conversationId`
 * after message `$afterId` (and before `$beforeId`, a bigint or null, when given), oldest first.
 * One JSON value instead of a row per message: a turn reads hundreds of them, and decoding one
 * document costs half as much as decoding every field of every row. `$n` are parameter positions.
 */
export function recentMessagesJsonSql(at: {
  conversationId: number;
  afterId: number;
  limit: number;
  beforeId?: number;
}): string {
  const before =
    at.beforeId === undefined ? '' : ` AND ($${at.beforeId}::bigint IS NULL OR id < $${at.beforeId})`;
  return `(SELECT coalesce(json_agg(recent ORDER BY recent.id), '[]'::json) FROM (
       SELECT ${MESSAGE_COLUMNS}
       FROM messages WHERE conversation_id = $${at.conversationId}${before} AND id > $${at.afterId}
       ORDER BY id DESC LIMIT $${at.limit}) recent)`;
}

/** What recentMessagesJsonSql read, as recentMessages returns it. */
export function messagesFromJson(json: unknown): StoredMessage[] {
  return ((json ?? []) as MessageRow[]).map(toStoredMessage);
}

/** The newest `limit` messages of a conversation (after `afterId`, before `beforeId`), oldest first. */
export async function recentMessages(
  db: Queryable,
  conversationId: string,
  options: { limit?: number; beforeId?: number; afterId?: number } = {},
): Promise<StoredMessage[]> {
  const [row] = await db.query<{ messages: unknown }>(
    `SELECT ${recentMessagesJsonSql({ conversationId: 1, beforeId: 2, limit: 3, afterId: 4 })} AS messages`,
    [conversationId, options.beforeId ?? null, options.limit ?? 200, options.afterId ?? 0],
  );
  return messagesFromJson(row?.messages);
}
