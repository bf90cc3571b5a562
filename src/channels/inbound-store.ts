import type { Queryable } from '../db/index.ts';
import type { ChannelName, InboundMessage, StoredInbound } from './types.ts';

type InboundRow = {
  id: number;
  channel: ChannelName;
  channel_message_id: string;
  chat_id: string;
  sender_id: string;
  sender_name: string | null;
  kind: InboundMessage['kind'];
  text: string;
  meta: InboundMessage['meta'];
  status: StoredInbound['status'];
  user_id: string | null;
  attempts: number;
  received_at: Date | string;
  media: InboundMessage['media'];
  transcript: string | null;
};

const COLUMNS =
  'id, channel, channel_message_id, chat_id, sender_id, sender_name, kind, text, meta, status, user_id, attempts, received_at, media, transcript';

const toInbound = (row: InboundRow): StoredInbound => ({
  id: row.id,
  channel: row.channel,
  channelMessageId: row.channel_message_id,
  chatId: row.chat_id,
  senderId: row.sender_id,
  senderName: row.sender_name,
  kind: row.kind,
  text: row.text,
  meta: row.meta ?? {},
  status: row.status,
  userId: row.user_id,
  attempts: row.attempts,
  receivedAt: new Date(row.received_at),
  media: row.media ?? null,
  transcript: row.transcript,
});

/** Stores an inbound message once; a redelivery (same channel + message id) stores nothing. */
export async function storeInbound(
  db: Queryable,
  message: InboundMessage,
): Promise<{ id: number; duplicate: boolean }> {
  const rows = await db.query<{ id: number }>(
    `INSERT INTO inbound_messages (channel, channel_message_id, chat_id, sender_id, sender_name, kind, text, meta, media)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (channel, channel_message_id) DO NOTHING RETURNING id`,
    [
      message.channel,
      message.channelMessageId,
      message.chatId,
      message.senderId,
      message.senderName ?? null,
      message.kind,
      message.text,
      JSON.stringify(message.meta),
      message.media ? JSON.stringify(message.media) : null,
    ],
  );
  if (rows[0]) return { id: rows[0].id, duplicate: false };
  const existing = await db.query<{ id: number }>(
    'SELECT id FROM inbound_messages WHERE channel = $1 AND channel_message_id = $2',
    [message.channel, message.channelMessageId],
  );
  return { id: existing[0]!.id, duplicate: true };
}

/** Whether the platform message is stored already (a redelivery). */
export async function inboundStored(
  db: Queryable,
  channel: string,
  channelMessageId: string,
): Promise<boolean> {
  const rows = await db.query(
    'SELECT 1 FROM inbound_messages WHERE channel = $1 AND channel_message_id = $2',
    [channel, channelMessageId],
  );
  return rows.length > 0;
}

export async function getInbound(db: Queryable, id: number): Promise<StoredInbound | null> {
  const rows = await db.query<InboundRow>(`SELECT ${COLUMNS} FROM inbound_messages WHERE id = $1`, [id]);
  return rows[0] ? toInbound(rows[0]) : null;
}

/** The chat's messages not yet processed, oldest first. */
export async function openInboundOfChat(
  db: Queryable,
  channel: string,
  chatId: string,
): Promise<StoredInbound[]> {
  const rows = await db.query<InboundRow>(
    `SELECT ${COLUMNS} FROM inbound_messages
     WHERE channel = $1 AND chat_id = $2 AND status IN ('received', 'processing') ORDER BY id`,
    [channel, chatId],
  );
  return rows.map(toInbound);
}

/**
 * Chats with messages not yet processed that arrived before `before` (all of them without it):
 * after a restart, and in a periodic sweep, their processing is queued again.
 */
export async function chatsWithOpenInbound(
  db: Queryable,
  before: Date | null = null,
): Promise<Array<{ channel: string; chatId: string }>> {
  const rows = await db.query<{ channel: string; chat_id: string }>(
    `SELECT channel, chat_id FROM inbound_messages
     WHERE status IN ('received', 'processing') AND ($1::timestamptz IS NULL OR received_at < $1)
     GROUP BY channel, chat_id ORDER BY min(id)`,
    [before],
  );
  return rows.map((row) => ({ channel: row.channel, chatId: row.chat_id }));
}

export async function markInbound(
  db: Queryable,
  id: number,
  change: { status: StoredInbound['status']; userId?: string | null; error?: string | null },
): Promise<void> {
  const finished = change.status !== 'received' && change.status !== 'processing';
  await db.query(
    `UPDATE inbound_messages SET status = $2, user_id = COALESCE($3, user_id), error = $4,
       attempts = attempts + CASE WHEN $2 = 'processing' THEN 1 ELSE 0 END,
       processed_at = CASE WHEN $5::boolean THEN now() ELSE processed_at END
     WHERE id = $1`,
    [id, change.status, change.userId ?? null, change.error ?? null, finished],
  );
}

/** Keeps what a voice note said (a retried message is not transcribed twice). */
export async function setTranscript(db: Queryable, id: number, transcript: string): Promise<void> {
  await db.query('UPDATE inbound_messages SET transcript = $2 WHERE id = $1', [id, transcript]);
}

/** The transcript of the chat's latest transcribed voice note from this sender, for /transcript. */
export async function lastTranscript(
  db: Queryable,
  channel: string,
  chatId: string,
  senderId: string,
): Promise<{ transcript: string; receivedAt: Date } | null> {
  const rows = await db.query<{ transcript: string; received_at: Date | string }>(
    `SELECT transcript, received_at FROM inbound_messages
     WHERE channel = $1 AND chat_id = $2 AND sender_id = $3 AND kind = 'voice' AND transcript IS NOT NULL
     ORDER BY id DESC LIMIT 1`,
    [channel, chatId, senderId],
  );
  const row = rows[0];
  return row ? { transcript: row.transcript, receivedAt: new Date(row.received_at) } : null;
}
