import type { Queryable } from '../db/index.ts';
import type { ChannelName, ChatMeta, OutboundAudio } from './types.ts';

export type OutboxStatus = 'pending' | 'sending' | 'sent' | 'ambiguous' | 'failed';

export type NewOutbound = {
  /** Unique per logical message part: a retried job inserts nothing twice (`reply:<inbound>:<part>`). */
  dedupeKey: string;
  channel: ChannelName;
  chatId: string;
  meta: ChatMeta;
  userId: string | null;
  inboundId: number | null;
  text: string;
  /** A voice message; `text` is then what is sent if the platform refuses it. */
  audio?: OutboundAudio | null;
  /** The delivery (deliver(), not a reply) this part belongs to: its outcome settles that delivery. */
  deliveryId?: string | null;
};

export type OutboxRow = NewOutbound & {
  id: number;
  status: OutboxStatus;
  attempts: number;
  nextAttemptAt: Date;
  lastError: string | null;
  platformMessageId: string | null;
};

type Row = {
  id: number;
  dedupe_key: string;
  channel: ChannelName;
  chat_id: string;
  meta: ChatMeta;
  user_id: string | null;
  inbound_id: number | null;
  text: string;
  status: OutboxStatus;
  attempts: number;
  next_attempt_at: Date | string;
  last_error: string | null;
  platform_message_id: string | null;
  audio: Uint8Array | null;
  audio_type: string | null;
  delivery_id: string | null;
};

const COLUMNS =
  'id, dedupe_key, channel, chat_id, meta, user_id, inbound_id, text, status, attempts, next_attempt_at, last_error, platform_message_id, audio, audio_type, delivery_id';

const toOutbox = (row: Row): OutboxRow => ({
  id: row.id,
  dedupeKey: row.dedupe_key,
  channel: row.channel,
  chatId: row.chat_id,
  meta: row.meta ?? {},
  userId: row.user_id,
  inboundId: row.inbound_id,
  text: row.text,
  status: row.status,
  attempts: row.attempts,
  nextAttemptAt: new Date(row.next_attempt_at),
  lastError: row.last_error,
  platformMessageId: row.platform_message_id,
  audio:
    row.audio && row.audio_type ? { data: new Uint8Array(row.audio), contentType: row.audio_type } : null,
  deliveryId: row.delivery_id,
});

/** Stores message parts in order; a part whose key is already stored is skipped. Returns the new ids. */
export async function queueOutbound(db: Queryable, parts: NewOutbound[]): Promise<number[]> {
  const ids: number[] = [];
  for (const part of parts) {
    const rows = await db.query<{ id: number }>(
      // Due at once, to the millisecond: the sender compares with its own clock's milliseconds, and
      // a row stamped later in the same millisecond would otherwise wait for its next pass.
      `INSERT INTO outbox_messages (dedupe_key, channel, chat_id, meta, user_id, inbound_id, text, audio, audio_type, delivery_id, next_attempt_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, date_trunc('milliseconds', now()))
       ON CONFLICT (dedupe_key) DO NOTHING RETURNING id`,
      [
        part.dedupeKey,
        part.channel,
        part.chatId,
        JSON.stringify(part.meta),
        part.userId,
        part.inboundId,
        part.text,
        part.audio ? Buffer.from(part.audio.data) : null,
        part.audio?.contentType ?? null,
        part.deliveryId ?? null,
      ],
    );
    if (rows[0]) ids.push(rows[0].id);
  }
  return ids;
}

/** Outbound messages stored and not yet delivered (pending, being sent, or waiting on a retry). */
export async function outboxBacklog(db: Queryable): Promise<number> {
  const rows = await db.query<{ count: number }>(
    "SELECT count(*)::int AS count FROM outbox_messages WHERE status IN ('pending', 'sending')",
  );
  return rows[0]?.count ?? 0;
}

/** Chats with something to send (or a send left in flight by a crash). */
export async function chatsWithOpenMessages(
  db: Queryable,
  now: Date,
  limit = 100,
): Promise<Array<{ channel: ChannelName; chatId: string }>> {
  const rows = await db.query<{ channel: ChannelName; chat_id: string }>(
    `SELECT channel, chat_id FROM outbox_messages
     WHERE status = 'sending' OR (status = 'pending' AND next_attempt_at <= $1)
     GROUP BY channel, chat_id ORDER BY min(id) LIMIT $2`,
    [now, limit],
  );
  return rows.map((row) => ({ channel: row.channel, chatId: row.chat_id }));
}

/** The oldest message of the chat not yet settled: per-chat order means only it may go next. */
export async function firstOpenOfChat(
  db: Queryable,
  channel: string,
  chatId: string,
): Promise<OutboxRow | null> {
  const rows = await db.query<Row>(
    `SELECT ${COLUMNS} FROM outbox_messages
     WHERE channel = $1 AND chat_id = $2 AND status IN ('pending', 'sending') ORDER BY id LIMIT 1`,
    [channel, chatId],
  );
  return rows[0] ? toOutbox(rows[0]) : null;
}

/** Marks the row in flight before the request leaves, so a crash mid-send is known later. */
export async function markSending(db: Queryable, id: number): Promise<boolean> {
  const rows = await db.query(
    "UPDATE outbox_messages SET status = 'sending', attempts = attempts + 1 WHERE id = $1 AND status = 'pending' RETURNING id",
    [id],
  );
  return rows.length > 0;
}

/** How a send ended for good: the row is not sent again. */
export type FinalOutcome =
  | { status: 'sent'; platformMessageId: string | null }
  | { status: 'failed' | 'ambiguous'; error: string };

export async function settleOutbound(
  db: Queryable,
  id: number,
  outcome: FinalOutcome | { status: 'pending'; nextAttemptAt: Date; error: string },
): Promise<void> {
  if (outcome.status === 'sent') {
    await db.query(
      "UPDATE outbox_messages SET status = 'sent', platform_message_id = $2, sent_at = now(), last_error = NULL WHERE id = $1",
      [id, outcome.platformMessageId],
    );
  } else if (outcome.status === 'pending') {
    await db.query(
      "UPDATE outbox_messages SET status = 'pending', next_attempt_at = $2, last_error = $3 WHERE id = $1",
      [id, outcome.nextAttemptAt, outcome.error],
    );
  } else {
    await db.query('UPDATE outbox_messages SET status = $2, last_error = $3 WHERE id = $1', [
      id,
      outcome.status,
      outcome.error,
    ]);
  }
}

export async function outboxRows(
  db: Queryable,
  filter: { inboundId?: number; channel?: string; chatId?: string } = {},
): Promise<OutboxRow[]> {
  const rows = await db.query<Row>(
    `SELECT ${COLUMNS} FROM outbox_messages
     WHERE ($1::bigint IS NULL OR inbound_id = $1) AND ($2::text IS NULL OR channel = $2) AND ($3::text IS NULL OR chat_id = $3)
     ORDER BY id`,
    [filter.inboundId ?? null, filter.channel ?? null, filter.chatId ?? null],
  );
  return rows.map(toOutbox);
}
