import type { Queryable } from '../db/index.ts';
import { ensureUser, findIdentity, linkIdentity } from '../users/index.ts';
import { settlePairingsOf } from './pairing.ts';

/** One `STEWARD_ALLOW` entry: `channel:sender` (user `channel:sender`) or `channel:sender=USER`. */
export type AllowEntry = { channel: string; senderId: string; userId: string | null };

export function parseAllowEntry(entry: string): AllowEntry | null {
  const match = /^([a-z]+):([^=,\s]+)(?:=([^=,\s]+))?$/.exec(entry.trim());
  if (!match) return null;
  return { channel: match[1]!, senderId: match[2]!, userId: match[3] ?? null };
}

/** The Steward user a channel sender becomes when admitted without a link: `<channel>:<sender id>`. */
export function channelUserId(channel: string, senderId: string): string {
  return `${channel}:${senderId}`;
}

/**
 * Who a sender is: the user their identity is linked to, or — when the allowlist names them —
 * the user it says (linking the identity now). Null for a stranger, who must pair first.
 */
export async function resolveSender(
  db: Queryable,
  sender: { channel: string; senderId: string; senderName?: string | null },
  allow: readonly string[],
): Promise<string | null> {
  const identity = await findIdentity(db, sender.channel, sender.senderId);
  const entry = allow
    .map(parseAllowEntry)
    .find((candidate) => candidate?.channel === sender.channel && candidate.senderId === sender.senderId);
  // An explicit `=USER` entry is the operator's word and wins over an older link.
  if (identity && !(entry?.userId && entry.userId !== identity.userId)) return identity.userId;
  if (!entry) return null;
  const userId = entry.userId ?? channelUserId(sender.channel, sender.senderId);
  await ensureUser(db, userId);
  await linkIdentity(db, {
    channel: sender.channel,
    externalId: sender.senderId,
    userId,
    displayName: sender.senderName ?? null,
  });
  await settlePairingsOf(db, sender.channel, sender.senderId, userId);
  return userId;
}

/**
 * Whether a sender is admitted — linked to a user, or named by the allowlist — without linking
 * anything (for a platform's invitation, before the sender has written).
 */
export async function senderAdmitted(
  db: Queryable,
  channel: string,
  senderId: string,
  allow: readonly string[],
): Promise<boolean> {
  if (allow.map(parseAllowEntry).some((entry) => entry?.channel === channel && entry.senderId === senderId))
    return true;
  return (await findIdentity(db, channel, senderId)) !== null;
}
