import type { Queryable } from '../db/index.ts';

/** One line of the dashboard's turn list: the request and reply cut short. */
export type TurnListItem = {
  id: string;
  userId: string;
  conversationId: string;
  channel: string | null;
  status: string;
  mode: string;
  request: string;
  reply: string | null;
  queuedAt: Date;
  finishedAt: Date | null;
};

/** The latest turns of one user, or (userId null, the owner) of everyone; optionally of one conversation. */
export async function recentTurns(
  db: Queryable,
  options: { userId: string | null; limit: number; conversationId?: string },
): Promise<TurnListItem[]> {
  const rows = await db.query<TurnListItem>(
    `SELECT id, user_id AS "userId", conversation_id AS "conversationId", channel, status, mode,
            coalesce(left(request, 300), '') AS request, left(reply, 2000) AS reply,
            queued_at AS "queuedAt", finished_at AS "finishedAt"
     FROM turns
     WHERE ($1::text IS NULL OR user_id = $1) AND ($3::text IS NULL OR conversation_id = $3)
     ORDER BY queued_at DESC, seq DESC LIMIT $2`,
    [options.userId, Math.max(1, Math.trunc(options.limit)), options.conversationId ?? null],
  );
  return rows.map((row) => ({
    ...row,
    queuedAt: new Date(row.queuedAt),
    finishedAt: row.finishedAt ? new Date(row.finishedAt) : null,
  }));
}
