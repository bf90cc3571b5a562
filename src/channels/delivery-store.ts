import type { Queryable } from '../db/index.ts';
import type { DeliveryAttempt, DeliveryReceipt, DeliveryStatus } from '../workflows/index.ts';

/** What a delivery carries: a workflow run's output, a task reminder, an alert, a notice (a missed run). */
export type DeliverySource = 'workflow' | 'reminder' | 'alert' | 'notice';

/**
 * `pending`: in the outbox; `delivered`: a channel returned its message id (or it was stored in
 * the conversation of a user with no channel); `ambiguous`: a send's outcome is unknown — it may
 * have arrived; `failed`: no channel took it (it waits in the dashboard inbox).
 */
export type DeliveryRow = {
  id: string;
  userId: string;
  source: string;
  text: string;
  status: DeliveryStatus;
  channel: string | null;
  chatId: string | null;
  attempts: DeliveryAttempt[];
};

type Row = {
  id: string;
  user_id: string;
  source: string;
  text: string;
  status: DeliveryStatus;
  channel: string | null;
  chat_id: string | null;
  attempts: DeliveryAttempt[] | string;
  created_at: Date | string;
  settled_at: Date | string | null;
  in_inbox?: boolean;
};

const COLUMNS = 'id, user_id, source, text, status, channel, chat_id, attempts, created_at, settled_at';

const attemptsOf = (value: Row['attempts']): DeliveryAttempt[] =>
  typeof value === 'string' ? (JSON.parse(value) as DeliveryAttempt[]) : (value ?? []);

const toDelivery = (row: Row): DeliveryRow => ({
  id: row.id,
  userId: row.user_id,
  source: row.source,
  text: row.text,
  status: row.status,
  channel: row.channel,
  chatId: row.chat_id,
  attempts: attemptsOf(row.attempts),
});

const iso = (value: Date | string | null): string | null =>
  value === null ? null : new Date(value).toISOString();

const toReceipt = (row: Row): DeliveryReceipt => {
  const attempts = attemptsOf(row.attempts);
  return {
    id: row.id,
    source: row.source,
    status: row.status,
    channel: row.channel,
    fallback: row.status === 'delivered' && attempts.length > 1,
    inbox: row.in_inbox ?? false,
    attempts,
    text: row.text,
    created_at: iso(row.created_at)!,
    settled_at: iso(row.settled_at),
  };
};

export async function insertDelivery(
  db: Queryable,
  delivery: {
    id: string;
    userId: string;
    source: DeliverySource;
    text: string;
    status: DeliveryStatus;
    channel: string | null;
    chatId: string | null;
    attempts: DeliveryAttempt[];
    settled: boolean;
  },
): Promise<void> {
  await db.query(
    `INSERT INTO deliveries (id, user_id, source, text, status, channel, chat_id, attempts, settled_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, CASE WHEN $9::boolean THEN now() END)`,
    [
      delivery.id,
      delivery.userId,
      delivery.source,
      delivery.text,
      delivery.status,
      delivery.channel,
      delivery.chatId,
      JSON.stringify(delivery.attempts),
      delivery.settled,
    ],
  );
}

/** The delivery, locked until the transaction ends (two settling processes decide one after the other). */
export async function lockDelivery(tx: Queryable, id: string): Promise<DeliveryRow | null> {
  const rows = await tx.query<Row>(`SELECT ${COLUMNS} FROM deliveries WHERE id = $1 FOR UPDATE`, [id]);
  return rows[0] ? toDelivery(rows[0]) : null;
}

export async function updateDelivery(
  tx: Queryable,
  id: string,
  change: {
    status: DeliveryStatus;
    channel: string | null;
    chatId: string | null;
    attempts: DeliveryAttempt[];
  },
): Promise<void> {
  await tx.query(
    `UPDATE deliveries SET status = $2, channel = $3, chat_id = $4, attempts = $5,
       settled_at = CASE WHEN $2 = 'pending' THEN NULL ELSE now() END
     WHERE id = $1`,
    [id, change.status, change.channel, change.chatId, JSON.stringify(change.attempts)],
  );
}

/** Receipts by id (ids not found are absent). */
export async function deliveryReceipts(db: Queryable, ids: string[]): Promise<Map<string, DeliveryReceipt>> {
  if (ids.length === 0) return new Map();
  const rows = await db.query<Row>(
    `SELECT ${COLUMNS}, EXISTS (SELECT 1 FROM inbox_messages m WHERE m.delivery_id = d.id) AS in_inbox
     FROM deliveries d WHERE id = ANY($1::text[])`,
    [ids],
  );
  return new Map(rows.map((row) => [row.id, toReceipt(row)]));
}

/** The latest deliveries (one user's, or everyone's), newest first. */
export async function recentDeliveries(
  db: Queryable,
  options: { userId?: string | null; limit?: number } = {},
): Promise<Array<DeliveryReceipt & { user: string }>> {
  const rows = await db.query<Row>(
    `SELECT ${COLUMNS}, EXISTS (SELECT 1 FROM inbox_messages m WHERE m.delivery_id = d.id) AS in_inbox
     FROM deliveries d WHERE ($1::text IS NULL OR user_id = $1)
     ORDER BY created_at DESC, id DESC LIMIT $2`,
    [options.userId ?? null, options.limit ?? 20],
  );
  return rows.map((row) => ({ ...toReceipt(row), user: row.user_id }));
}

/** Marks the delivery's parts still waiting in one chat as failed (an earlier part failed there). */
export async function cancelOpenParts(
  tx: Queryable,
  deliveryId: string,
  chat: { channel: string; chatId: string },
  reason: string,
): Promise<void> {
  await tx.query(
    `UPDATE outbox_messages SET status = 'failed', last_error = $4
     WHERE delivery_id = $1 AND channel = $2 AND chat_id = $3 AND status = 'pending'`,
    [deliveryId, chat.channel, chat.chatId, reason],
  );
}

/** The settled statuses of the delivery's parts in one chat, or null while a part is still open. */
export async function partsOutcome(
  tx: Queryable,
  deliveryId: string,
  chat: { channel: string; chatId: string },
): Promise<Array<{ status: string; lastError: string | null }> | null> {
  const rows = await tx.query<{ status: string; last_error: string | null }>(
    `SELECT status, last_error FROM outbox_messages WHERE delivery_id = $1 AND channel = $2 AND chat_id = $3 ORDER BY id`,
    [deliveryId, chat.channel, chat.chatId],
  );
  if (rows.some((row) => row.status === 'pending' || row.status === 'sending')) return null;
  return rows.map((row) => ({ status: row.status, lastError: row.last_error }));
}

/** One message waiting in a user's dashboard inbox. */
export type InboxEntry = {
  id: number;
  user: string;
  deliveryId: string | null;
  text: string;
  note: string;
  createdAt: Date;
  readAt: Date | null;
};

export async function addToInbox(
  tx: Queryable,
  entry: { userId: string; deliveryId: string | null; text: string; note: string },
): Promise<void> {
  await tx.query('INSERT INTO inbox_messages (user_id, delivery_id, text, note) VALUES ($1, $2, $3, $4)', [
    entry.userId,
    entry.deliveryId,
    entry.text,
    entry.note,
  ]);
}

/** A user's inbox (or everyone's for the owner: `userId` null), unread first, newest first. */
export async function inboxOf(db: Queryable, userId: string | null, limit = 50): Promise<InboxEntry[]> {
  const rows = await db.query<{
    id: number;
    user_id: string;
    delivery_id: string | null;
    text: string;
    note: string;
    created_at: Date | string;
    read_at: Date | string | null;
  }>(
    `SELECT id, user_id, delivery_id, text, note, created_at, read_at FROM inbox_messages
     WHERE ($1::text IS NULL OR user_id = $1)
     ORDER BY (read_at IS NULL) DESC, id DESC LIMIT $2`,
    [userId, limit],
  );
  return rows.map((row) => ({
    id: Number(row.id),
    user: row.user_id,
    deliveryId: row.delivery_id,
    text: row.text,
    note: row.note,
    createdAt: new Date(row.created_at),
    readAt: row.read_at ? new Date(row.read_at) : null,
  }));
}

/** Unread inbox messages (one user's, or everyone's). */
export async function unreadInboxCount(db: Queryable, userId: string | null): Promise<number> {
  const rows = await db.query<{ count: number }>(
    'SELECT count(*)::int AS count FROM inbox_messages WHERE read_at IS NULL AND ($1::text IS NULL OR user_id = $1)',
    [userId],
  );
  return rows[0]?.count ?? 0;
}

/**
 * Marks inbox messages read: one (`id`) or all of them. `userId` null (the owner) may mark
 * anyone's; a user marks only their own. Returns how many changed.
 */
export async function markInboxRead(
  db: Queryable,
  target: { userId: string | null; id?: number },
): Promise<number> {
  const rows = await db.query(
    `UPDATE inbox_messages SET read_at = now()
     WHERE read_at IS NULL AND ($1::text IS NULL OR user_id = $1) AND ($2::bigint IS NULL OR id = $2)
     RETURNING id`,
    [target.userId, target.id ?? null],
  );
  return rows.length;
}

/** A receipt in a few words, for tables: "delivered on slack (telegram failed)". */
export function deliverySummary(receipt: DeliveryReceipt): string {
  const failed = receipt.attempts.filter((attempt) => attempt.status === 'failed').map((a) => a.channel);
  const after = failed.length ? ` (${failed.join(', ')} failed)` : '';
  switch (receipt.status) {
    case 'pending':
      return `pending on ${receipt.channel ?? '?'}${after}`;
    case 'delivered':
      return receipt.channel === 'conversation'
        ? 'delivered in the conversation (no chat channel)'
        : `delivered on ${receipt.channel ?? '?'}${after}`;
    case 'ambiguous':
      return `ambiguous on ${receipt.channel ?? '?'}: may have arrived; a copy is in the inbox`;
    case 'failed':
      return `failed on ${failed.join(', ') || 'every channel'}; kept in the dashboard inbox`;
  }
}

export type { DeliveryAttempt, DeliveryReceipt, DeliveryStatus };
