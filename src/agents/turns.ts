import type { Queryable } from '../db/index.ts';
import { countTokensAsync, turnUsageSql, type Usage } from '../llm/index.ts';
import {
  type HistoryRange,
  HistoryWindows,
  insertReplyMessageSql,
  insertUserMessageSql,
  type StoredMessage,
  touchConversationSql,
} from '../memory/index.ts';

/*
 * Turns (`turns`, owned by this folder: the engine's queue). A turn is stored `queued` the moment
 * its message arrives (unique per channel message id), becomes `running` when it takes the
 * conversation lock — only then does its user message join the conversation — and ends
 * `completed`, `paused`, `interrupted` or `failed`.
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

/** The columns under their record's names: a row is a record but for its times. */
const COLUMNS = [
  'id',
  'seq',
  'conversation_id AS "conversationId"',
  'user_id AS "userId"',
  'status',
  'mode',
  `coalesce(request, '') AS request`,
  'channel',
  'channel_message_id AS "channelMessageId"',
  'owner',
  'user_message_id AS "userMessageId"',
  'reply',
  'state',
  'stop_reason AS "stopReason"',
  'error',
  'receipts',
  'queued_at AS "queuedAt"',
  'started_at AS "startedAt"',
  'finished_at AS "finishedAt"',
].join(', ');

/** A row as read; times are text when the row came inside JSON. */
type TurnRow = Omit<TurnRecord, 'queuedAt' | 'startedAt' | 'finishedAt'> & {
  queuedAt: Date | string;
  startedAt: Date | string;
  finishedAt: Date | string | null;
};

const toTurn = ({ queuedAt, startedAt, finishedAt, ...row }: TurnRow): TurnRecord => ({
  ...row,
  queuedAt: new Date(queuedAt),
  startedAt: row.status === 'queued' ? null : new Date(startedAt),
  finishedAt: finishedAt ? new Date(finishedAt) : null,
});

/** The turns matching `where` (the SQL after WHERE, an ORDER BY included), as records. */
async function selectTurns(
  db: Queryable,
  where: string,
  params: readonly unknown[] = [],
): Promise<TurnRecord[]> {
  const rows = await db.query<TurnRow>(`SELECT ${COLUMNS} FROM turns WHERE ${where}`, params);
  return rows.map(toTurn);
}

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
  return { turn: (await turnOfChannelMessage(db, turn.channel, turn.channelMessageId!))!, duplicate: true };
}

/** The turn a channel message started, if it was seen before. */
export async function turnOfChannelMessage(
  db: Queryable,
  channel: string,
  channelMessageId: string,
): Promise<TurnRecord | null> {
  const [turn] = await selectTurns(db, 'channel = $1 AND channel_message_id = $2', [
    channel,
    channelMessageId,
  ]);
  return turn ?? null;
}

export async function getTurn(db: Queryable, id: string): Promise<TurnRecord | null> {
  const [turn] = await selectTurns(db, 'id = $1', [id]);
  return turn ?? null;
}

/** claimTurn's statement; the SQL for memory's tables comes from memory. Parameters as in claimTurn. */
const CLAIM_WITH_MESSAGE = `WITH waiting AS (SELECT id FROM turns WHERE id = $1 AND status = 'queued'),
     message AS (${insertUserMessageSql('waiting', {
       turnId: 1,
       conversationId: 3,
       userId: 4,
       content: 5,
       context: 6,
       tokenCount: 7,
       channel: 8,
       channelMessageId: 9,
     })}),
     claimed AS (
       UPDATE turns SET status = 'running', owner = $2, started_at = now(), user_message_id = (SELECT id FROM message)
       WHERE id = $1 AND status = 'queued' AND EXISTS (SELECT 1 FROM message) RETURNING id),
     touched AS (${touchConversationSql(3, 'claimed')})
     SELECT (SELECT id FROM message) AS message_id FROM claimed`;

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
  const rows = await db.query<{ message_id: number }>(CLAIM_WITH_MESSAGE, [
    turn.id,
    owner,
    turn.conversationId,
    turn.userId,
    turn.request,
    context,
    tokenCount,
    turn.channelMessageId ? turn.channel : null,
    turn.channelMessageId,
  ]);
  return rows[0]?.message_id ?? null;
}

/**
 * In one round trip: the conversation's queued or running turns up to `throughSeq`, in order,
 * its latest turn that has ended (a paused one may be resumed by the next) and, when `history`
 * asks, its newest `limit` messages after `afterId` (what a turn run next reads, oldest first),
 * through `history.windows` (only what was added since it last read them, when nothing else
 * changed; a second statement reads them whole when something did).
 */
export async function turnsToRun(
  db: Queryable,
  conversationId: string,
  throughSeq: number,
  history?: HistoryRange & { windows: HistoryWindows },
): Promise<{ open: TurnRecord[]; latestEnded: TurnRecord | null; stored?: StoredMessage[] }> {
  const messages = history
    ? HistoryWindows.sql({ conversationId: 1, afterId: 3, limit: 4, from: 5, through: 6 })
    : 'NULL';
  const [row] = await db.query<{ turns: Array<TurnRow & { open: boolean }>; messages: unknown }>(
    `SELECT (SELECT json_agg(listed ORDER BY listed.seq) FROM (
       (SELECT ${COLUMNS}, true AS open FROM turns
        WHERE conversation_id = $1 AND status IN ('queued', 'running') AND seq <= $2)
       UNION ALL
       (SELECT ${COLUMNS}, false AS open FROM turns
        WHERE conversation_id = $1 AND status NOT IN ('queued', 'running') ORDER BY seq DESC LIMIT 1)
     ) listed) AS turns, ${messages} AS messages`,
    history
      ? [
          conversationId,
          throughSeq,
          history.afterId,
          history.limit,
          ...history.windows.keptIds(conversationId, history),
        ]
      : [conversationId, throughSeq],
  );
  const turns = (row?.turns ?? []).map(({ open, ...turn }) => ({ open, turn: toTurn(turn) }));
  const stored = history
    ? (history.windows.settle(conversationId, history, row?.messages) ??
      (await history.windows.read(db, conversationId, history)))
    : undefined;
  return {
    open: turns.filter((entry) => entry.open).map((entry) => entry.turn),
    latestEnded: turns.find((entry) => !entry.open)?.turn ?? null,
    ...(stored ? { stored } : {}),
  };
}

/** Every queued or running turn, with its owner (the orphan sweep). */
export async function allOpenTurns(db: Queryable): Promise<TurnRecord[]> {
  return selectTurns(db, `status IN ('queued', 'running') ORDER BY seq`);
}

/**
 * The ids of the conversation's turns that have not ended (queued or running): memory's
 * compaction never reads past one. Read through `db`, in the caller's snapshot.
 */
export async function openTurnIds(db: Queryable, conversationId: string): Promise<Set<string>> {
  const rows = await db.query<{ id: string }>(
    `SELECT id FROM turns WHERE conversation_id = $1 AND status IN ('queued', 'running')`,
    [conversationId],
  );
  return new Set(rows.map((row) => row.id));
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
  /** What the user is told: stored as the turn's last message and with the turn. */
  reply: string;
  stopReason: string;
  error: string | null;
  state: unknown;
  /** The turn's receipts (JSON). */
  receipts: unknown;
};

/** finishTurn's statement; the SQL for memory's and llm's tables comes from them. Parameters as in finishTurn. */
const FINISH_WITH_REPLY = `WITH reply AS (${insertReplyMessageSql({
  turnId: 1,
  conversationId: 2,
  userId: 3,
  content: 5,
  tokenCount: 10,
})}),
     usage AS (${turnUsageSql(1)}),
     ended AS (
       UPDATE turns SET status = $4, reply = $5, stop_reason = $6, error = $7, state = $8, receipts = $9,
         prompt_tokens = usage."promptTokens", cached_tokens = usage."cachedTokens",
         cache_write_tokens = usage."cacheWriteTokens", completion_tokens = usage."completionTokens",
         cost = usage.cost, finished_at = now()
       FROM usage WHERE turns.id = $1)
     SELECT * FROM usage`;

/**
 * Ends a turn in one statement: stores its reply as the conversation's next message, and the
 * turn's end with what its model calls used — summed from `llm_calls` as they stand, so a turn
 * resumed after a crash counts the calls made before it too. Returns that usage.
 */
export async function finishTurn(
  db: Queryable,
  turn: { id: string; conversationId: string; userId: string },
  end: TurnEnd,
): Promise<Usage> {
  const rows = await db.query<Usage>(FINISH_WITH_REPLY, [
    turn.id,
    turn.conversationId,
    turn.userId,
    end.status,
    end.reply,
    end.stopReason,
    end.error,
    end.state === null ? null : JSON.stringify(end.state),
    JSON.stringify(end.receipts),
    await countTokensAsync(end.reply),
  ]);
  return rows[0]!;
}

/** The conversation's latest turn that has started (for resuming a paused one). */
export async function latestStartedTurn(db: Queryable, conversationId: string): Promise<TurnRecord | null> {
  const [turn] = await selectTurns(
    db,
    `conversation_id = $1 AND status NOT IN ('queued', 'running') ORDER BY seq DESC LIMIT 1`,
    [conversationId],
  );
  return turn ?? null;
}

export async function setTurnState(db: Queryable, id: string, state: unknown): Promise<void> {
  await db.query('UPDATE turns SET state = $2 WHERE id = $1', [id, JSON.stringify(state)]);
}
