import type { Queryable } from '../db/index.ts';
import { countTokensAsync } from '../llm/index.ts';

/*
 * Turns (`turns`, owned by this folder with the conversation they belong to). A turn is stored
 * `queued` the moment its message arrives (unique per channel message id), becomes `running`
 * when it takes the conversation lock — only then does its user message join the conversation —
 * and ends `completed`, `paused`, `interrupted` or `failed`.
 */

export type TurnState = 'queued' | 'running' | 'completed' | 'paused' | 'interrupted' | 'failed';

export type TurnRecord = {
  id: string;
  seq: number;
  conversationId: string;
  userId: string;
  status: TurnState;
  mode: string;
  request: string;
  channel: string | null;
  channelMessageId: string | null;
  owner: string | null;
  userMessageId: number | null;
  reply: string | null;
  state: unknown;
  stopReason: string | null;
  error: string | null;
  /** The receipts the turn ended with, as stored (JSON `{skill, status, summary, execution_id}`). */
  receipts: unknown;
  queuedAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
};

type TurnRow = {
  id: string;
  seq: number;
  conversation_id: string;
  user_id: string;
  status: TurnState;
  mode: string;
  request: string | null;
  channel: string | null;
  channel_message_id: string | null;
  owner: string | null;
  user_message_id: number | null;
  reply: string | null;
  state: unknown;
  stop_reason: string | null;
  error: string | null;
  receipts: unknown;
  queued_at: Date;
  started_at: Date;
  finished_at: Date | null;
};

const COLUMNS =
  'id, seq, conversation_id, user_id, status, mode, request, channel, channel_message_id, owner, user_message_id, reply, state, stop_reason, error, receipts, queued_at, started_at, finished_at';

const toTurn = (row: TurnRow): TurnRecord => ({
  id: row.id,
  seq: row.seq,
  conversationId: row.conversation_id,
  userId: row.user_id,
  status: row.status,
  mode: row.mode,
  request: row.request ?? '',
  channel: row.channel,
  channelMessageId: row.channel_message_id,
  owner: row.owner,
  userMessageId: row.user_message_id,
  reply: row.reply,
  state: row.state,
  stopReason: row.stop_reason,
  error: row.error,
  receipts: row.receipts,
  queuedAt: new Date(row.queued_at),
  startedAt: row.status === 'queued' ? null : new Date(row.started_at),
  finishedAt: row.finished_at ? new Date(row.finished_at) : null,
});

export type NewTurn = {
  id: string;
  conversationId: string;
  userId: string;
  mode: string;
  request: string;
  channel: string;
  channelMessageId: string | null;
  owner: string;
};

/**
 * Stores a turn as `queued`. A channel message id seen before stores nothing and returns the
 * existing turn with `duplicate: true` (a redelivered webhook).
 */
export async function queueTurn(
  db: Queryable,
  turn: NewTurn,
): Promise<{ turn: TurnRecord; duplicate: boolean }> {
  const rows = await db.query<TurnRow>(
    `INSERT INTO turns (id, conversation_id, user_id, status, mode, request, channel, channel_message_id, owner)
     VALUES ($1, $2, $3, 'queued', $4, $5, $6, $7, $8)
     ON CONFLICT (channel, channel_message_id) WHERE channel_message_id IS NOT NULL DO NOTHING
     RETURNING ${COLUMNS}`,
    [
      turn.id,
      turn.conversationId,
      turn.userId,
      turn.mode,
      turn.request,
      turn.channel,
      turn.channelMessageId,
      turn.owner,
    ],
  );
  if (rows[0]) return { turn: toTurn(rows[0]), duplicate: false };
  const existing = await db.query<TurnRow>(
    `SELECT ${COLUMNS} FROM turns WHERE channel = $1 AND channel_message_id = $2`,
    [turn.channel, turn.channelMessageId],
  );
  return { turn: toTurn(existing[0]!), duplicate: true };
}

/** The turn a channel message started, if it was seen before. */
export async function turnOfChannelMessage(
  db: Queryable,
  channel: string,
  channelMessageId: string,
): Promise<TurnRecord | null> {
  const rows = await db.query<TurnRow>(
    `SELECT ${COLUMNS} FROM turns WHERE channel = $1 AND channel_message_id = $2`,
    [channel, channelMessageId],
  );
  return rows[0] ? toTurn(rows[0]) : null;
}

export async function getTurn(db: Queryable, id: string): Promise<TurnRecord | null> {
  const rows = await db.query<TurnRow>(`SELECT ${COLUMNS} FROM turns WHERE id = $1`, [id]);
  return rows[0] ? toTurn(rows[0]) : null;
}

/**
 * Starts a queued turn: marks it running for `owner` and appends its user message (with the
 * per-turn `context` it is sent with) to the conversation, in one statement. Returns the user
 * message id, or null when the turn was not queued any more (another instance took it). Call
 * under the conversation's lock.
 */
export async function claimTurn(
  db: Queryable,
  turn: TurnRecord,
  owner: string,
  context: string | null = null,
): Promise<number | null> {
  if (turn.userMessageId !== null) {
    const rows = await db.query(
      `UPDATE turns SET status = 'running', owner = $2, started_at = now() WHERE id = $1 AND status = 'queued' RETURNING id`,
      [turn.id, owner],
    );
    return rows.length ? turn.userMessageId : null;
  }
  const tokenCount = await countTokensAsync(context ? `${context}\n${turn.request}` : turn.request);
  const rows = await db.query<{ message_id: number }>(
    `WITH waiting AS (SELECT id FROM turns WHERE id = $1 AND status = 'queued'),
     message AS (
       INSERT INTO messages (conversation_id, user_id, turn_id, role, content, context, token_count, channel, channel_message_id)
       SELECT $3, $4, $1, 'user', $5, $6, $7, $8, $9 FROM waiting RETURNING id),
     claimed AS (
       UPDATE turns SET status = 'running', owner = $2, started_at = now(), user_message_id = (SELECT id FROM message)
       WHERE id = $1 AND status = 'queued' AND EXISTS (SELECT 1 FROM message) RETURNING id),
     touched AS (UPDATE conversations SET updated_at = now() WHERE id = $3 AND EXISTS (SELECT 1 FROM claimed))
     SELECT (SELECT id FROM message) AS message_id FROM claimed`,
    [
      turn.id,
      owner,
      turn.conversationId,
      turn.userId,
      turn.request,
      context,
      tokenCount,
      turn.channelMessageId ? turn.channel : null,
      turn.channelMessageId,
    ],
  );
  return rows[0]?.message_id ?? null;
}

/**
 * In one round trip: the conversation's queued or running turns up to `throughSeq`, in order,
 * and its latest turn that has ended (a paused one may be resumed by the next).
 */
export async function turnsToRun(
  db: Queryable,
  conversationId: string,
  throughSeq: number,
): Promise<{ open: TurnRecord[]; latestEnded: TurnRecord | null }> {
  const rows = await db.query<TurnRow & { open: boolean }>(
    `(SELECT ${COLUMNS}, true AS open FROM turns
      WHERE conversation_id = $1 AND status IN ('queued', 'running') AND seq <= $2)
     UNION ALL
     (SELECT ${COLUMNS}, false AS open FROM turns
      WHERE conversation_id = $1 AND status NOT IN ('queued', 'running') ORDER BY seq DESC LIMIT 1)
     ORDER BY seq`,
    [conversationId, throughSeq],
  );
  const ended = rows.find((row) => !row.open);
  return {
    open: rows.filter((row) => row.open).map(toTurn),
    latestEnded: ended ? toTurn(ended) : null,
  };
}

/** Every queued or running turn, with its owner (the orphan sweep). */
export async function allOpenTurns(db: Queryable): Promise<TurnRecord[]> {
  const rows = await db.query<TurnRow>(
    `SELECT ${COLUMNS} FROM turns WHERE status IN ('queued', 'running') ORDER BY seq`,
  );
  return rows.map(toTurn);
}

/** A crashed attempt that did nothing irreversible goes back to the queue to run again. */
export async function requeueTurn(db: Queryable, id: string): Promise<boolean> {
  const rows = await db.query(
    `UPDATE turns SET status = 'queued' WHERE id = $1 AND status = 'running' RETURNING id`,
    [id],
  );
  return rows.length === 1;
}

/** Marks a running (orphaned) turn interrupted; false when it was not running any more. */
export async function interruptTurn(
  db: Queryable,
  id: string,
  state: unknown,
  reply: string,
  receipts: unknown = [],
): Promise<boolean> {
  const rows = await db.query(
    `UPDATE turns SET status = 'interrupted', stop_reason = 'interrupted', finished_at = now(), state = $2, reply = $3,
       receipts = $4
     WHERE id = $1 AND status = 'running' RETURNING id`,
    [id, JSON.stringify(state), reply, JSON.stringify(receipts)],
  );
  return rows.length === 1;
}

export type TurnEnd = {
  status: Exclude<TurnState, 'queued' | 'running'>;
  reply: string;
  stopReason: string;
  error: string | null;
  state: unknown;
  /** The turn's receipts (JSON). */
  receipts: unknown;
  usage: {
    promptTokens: number;
    cachedTokens: number;
    cacheWriteTokens: number;
    completionTokens: number;
    cost: number;
  };
};

export async function finishTurn(db: Queryable, id: string, end: TurnEnd): Promise<void> {
  await db.query(
    `UPDATE turns SET status = $2, reply = $3, stop_reason = $4, error = $5, state = $6,
       prompt_tokens = $7, cached_tokens = $8, cache_write_tokens = $9, completion_tokens = $10, cost = $11, finished_at = now(),
       receipts = $12
     WHERE id = $1`,
    [
      id,
      end.status,
      end.reply,
      end.stopReason,
      end.error,
      end.state === null ? null : JSON.stringify(end.state),
      end.usage.promptTokens,
      end.usage.cachedTokens,
      end.usage.cacheWriteTokens,
      end.usage.completionTokens,
      end.usage.cost,
      JSON.stringify(end.receipts),
    ],
  );
}

/** The conversation's latest turn that has started (for resuming a paused one). */
export async function latestStartedTurn(db: Queryable, conversationId: string): Promise<TurnRecord | null> {
  const rows = await db.query<TurnRow>(
    `SELECT ${COLUMNS} FROM turns WHERE conversation_id = $1 AND status NOT IN ('queued', 'running')
     ORDER BY seq DESC LIMIT 1`,
    [conversationId],
  );
  return rows[0] ? toTurn(rows[0]) : null;
}

export async function setTurnState(db: Queryable, id: string, state: unknown): Promise<void> {
  await db.query('UPDATE turns SET state = $2 WHERE id = $1', [id, JSON.stringify(state)]);
}
