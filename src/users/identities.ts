import type { Queryable } from '../db/index.ts';

/** One person's account on one channel, joined to a Steward user. */
export type ChannelIdentity = {
  channel: string;
  externalId: string;
  userId: string;
  displayName: string | null;
  /** Where a message starts a direct conversation with them (a DM chat or space), when known. */
  directChatId: string | null;
  lastInboundAt: Date | null;
};

type IdentityRow = {
  channel: string;
  external_id: string;
  user_id: string;
  display_name: string | null;
  direct_chat_id: string | null;
  last_inbound_at: Date | string | null;
};

const COLUMNS = 'channel, external_id, user_id, display_name, direct_chat_id, last_inbound_at';

const toIdentity = (row: IdentityRow): ChannelIdentity => ({
  channel: row.channel,
  externalId: row.external_id,
  userId: row.user_id,
  displayName: row.display_name,
  directChatId: row.direct_chat_id,
  lastInboundAt: row.last_inbound_at ? new Date(row.last_inbound_at) : null,
});

export async function findIdentity(
  db: Queryable,
  channel: string,
  externalId: string,
): Promise<ChannelIdentity | null> {
  const rows = await db.query<IdentityRow>(
    `SELECT ${COLUMNS} FROM channel_identities WHERE channel = $1 AND external_id = $2`,
    [channel, externalId],
  );
  return rows[0] ? toIdentity(rows[0]) : null;
}

/**
 * Joins `channel:externalId` to `userId` (the user must exist), moving it when it was joined
 * to someone else: from then on that account's messages are that user's.
 */
export async function linkIdentity(
  db: Queryable,
  identity: { channel: string; externalId: string; userId: string; displayName?: string | null },
): Promise<ChannelIdentity> {
  const rows = await db.query<IdentityRow>(
    `INSERT INTO channel_identities (channel, external_id, user_id, display_name) VALUES ($1, $2, $3, $4)
     ON CONFLICT (channel, external_id)
     DO UPDATE SET user_id = EXCLUDED.user_id, display_name = COALESCE(EXCLUDED.display_name, channel_identities.display_name)
     RETURNING ${COLUMNS}`,
    [identity.channel, identity.externalId, identity.userId, identity.displayName ?? null],
  );
  return toIdentity(rows[0]!);
}

/** Records that the identity just wrote (its channel becomes the user's default for deliveries). */
export async function noteIdentityActivity(
  db: Queryable,
  channel: string,
  externalId: string,
  options: { directChatId?: string | null; displayName?: string | null; at?: Date } = {},
): Promise<void> {
  await db.query(
    `UPDATE channel_identities SET last_inbound_at = $3,
       direct_chat_id = COALESCE($4, direct_chat_id), display_name = COALESCE($5, display_name)
     WHERE channel = $1 AND external_id = $2`,
    [
      channel,
      externalId,
      options.at ?? new Date(),
      options.directChatId ?? null,
      options.displayName ?? null,
    ],
  );
}

export async function listIdentities(db: Queryable, userId?: string): Promise<ChannelIdentity[]> {
  const rows = await db.query<IdentityRow>(
    `SELECT ${COLUMNS} FROM channel_identities WHERE ($1::text IS NULL OR user_id = $1) ORDER BY user_id, channel, external_id`,
    [userId ?? null],
  );
  return rows.map(toIdentity);
}

/** Sets (or with null clears) the channel deliveries go to; unset means "where they last wrote from". */
export async function setPrimaryChannel(
  db: Queryable,
  userId: string,
  channel: string | null,
): Promise<void> {
  await db.query('UPDATE users SET primary_channel = $2 WHERE id = $1', [userId, channel]);
}

/**
 * The user's identities in the order deliveries try them: the primary channel's first when
 * one is set, then the most recently heard from. Empty for a user with no channel identity.
 */
export async function identitiesByPreference(db: Queryable, userId: string): Promise<ChannelIdentity[]> {
  const rows = await db.query<IdentityRow>(
    `SELECT ${COLUMNS.split(', ')
      .map((column) => `i.${column}`)
      .join(', ')}
     FROM channel_identities i JOIN users u ON u.id = i.user_id
     WHERE i.user_id = $1
     ORDER BY (u.primary_channel IS NOT NULL AND i.channel = u.primary_channel) DESC,
              i.last_inbound_at DESC NULLS LAST, i.id DESC`,
    [userId],
  );
  return rows.map(toIdentity);
}

/** The identity deliveries go to first (see identitiesByPreference), or null. */
export async function primaryIdentity(db: Queryable, userId: string): Promise<ChannelIdentity | null> {
  return (await identitiesByPreference(db, userId))[0] ?? null;
}
