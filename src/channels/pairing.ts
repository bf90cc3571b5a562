import { randomInt } from 'node:crypto';
import type { Queryable } from '../db/index.ts';
import type { ChannelName, ChatMeta } from './types.ts';

/** Pairing codes use A–Z and 2–9: no 0/1, so nobody confuses O with 0 or I with 1. */
export const PAIRING_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ23456789';
export const PAIRING_CODE_LENGTH = 8;
export const PAIRING_TTL_MS = 60 * 60_000;

export type PairingRequest = {
  code: string;
  channel: ChannelName;
  senderId: string;
  senderName: string | null;
  chatId: string;
  meta: ChatMeta;
  status: 'pending' | 'approved';
  userId: string | null;
  createdAt: Date;
  expiresAt: Date;
};

type Row = {
  code: string;
  channel: ChannelName;
  sender_id: string;
  sender_name: string | null;
  chat_id: string;
  meta: ChatMeta;
  status: 'pending' | 'approved';
  user_id: string | null;
  created_at: Date | string;
  expires_at: Date | string;
};

const COLUMNS =
  'code, channel, sender_id, sender_name, chat_id, meta, status, user_id, created_at, expires_at';

const toRequest = (row: Row): PairingRequest => ({
  code: row.code,
  channel: row.channel,
  senderId: row.sender_id,
  senderName: row.sender_name,
  chatId: row.chat_id,
  meta: row.meta ?? {},
  status: row.status,
  userId: row.user_id,
  createdAt: new Date(row.created_at),
  expiresAt: new Date(row.expires_at),
});

export function newPairingCode(random: (max: number) => number = randomInt): string {
  let code = '';
  for (let index = 0; index < PAIRING_CODE_LENGTH; index++)
    code += PAIRING_ALPHABET[random(PAIRING_ALPHABET.length)];
  return code;
}

/** Codes are shown upper case; people type them however they like. */
export function normalizePairingCode(input: string): string {
  return input.trim().toUpperCase().replace(/[\s-]/g, '');
}

/**
 * The sender's pending, unexpired code, or a new one. `created` tells whether the sender
 * should be told the code (a new code) or already was.
 */
export async function pairingCodeFor(
  db: Queryable,
  sender: {
    channel: ChannelName;
    senderId: string;
    senderName?: string | null;
    chatId: string;
    meta: ChatMeta;
  },
  now: Date,
  random?: (max: number) => number,
): Promise<{ request: PairingRequest; created: boolean }> {
  const existing = await db.query<Row>(
    `SELECT ${COLUMNS} FROM pairing_codes
     WHERE channel = $1 AND sender_id = $2 AND status = 'pending' AND expires_at > $3
     ORDER BY created_at DESC LIMIT 1`,
    [sender.channel, sender.senderId, now],
  );
  if (existing[0]) return { request: toRequest(existing[0]), created: false };
  for (;;) {
    const rows = await db.query<Row>(
      `INSERT INTO pairing_codes (code, channel, sender_id, sender_name, chat_id, meta, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (code) DO NOTHING RETURNING ${COLUMNS}`,
      [
        newPairingCode(random),
        sender.channel,
        sender.senderId,
        sender.senderName ?? null,
        sender.chatId,
        JSON.stringify(sender.meta),
        now,
        new Date(now.getTime() + PAIRING_TTL_MS),
      ],
    );
    if (rows[0]) return { request: toRequest(rows[0]), created: true };
  }
}

/** Whether this sender was ever given a pairing code on this channel. */
export async function pairingOffered(db: Queryable, channel: string, senderId: string): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM pairing_codes WHERE channel = $1 AND sender_id = $2 LIMIT 1', [
    channel,
    senderId,
  ]);
  return rows.length > 0;
}

/** Pending codes that have not expired, oldest first. */
export async function pendingPairings(db: Queryable, now: Date): Promise<PairingRequest[]> {
  const rows = await db.query<Row>(
    `SELECT ${COLUMNS} FROM pairing_codes WHERE status = 'pending' AND expires_at > $1 ORDER BY created_at`,
    [now],
  );
  return rows.map(toRequest);
}

/**
 * Marks a pending, unexpired code approved for `userId` (in the caller's transaction).
 * Returns the request, or why it cannot be approved.
 */
export async function claimPairing(
  db: Queryable,
  code: string,
  userId: (request: PairingRequest) => string,
  now: Date,
): Promise<PairingRequest | { problem: 'unknown' | 'expired' | 'approved' }> {
  const rows = await db.query<Row>(`SELECT ${COLUMNS} FROM pairing_codes WHERE code = $1`, [
    normalizePairingCode(code),
  ]);
  const row = rows[0];
  if (!row) return { problem: 'unknown' };
  const request = toRequest(row);
  if (request.status === 'approved') return { problem: 'approved' };
  if (request.expiresAt.getTime() <= now.getTime()) return { problem: 'expired' };
  const user = userId(request);
  await db.query(
    "UPDATE pairing_codes SET status = 'approved', user_id = $2, approved_at = $3 WHERE code = $1",
    [request.code, user, now],
  );
  return { ...request, status: 'approved', userId: user };
}

/** Marks every pending code of a sender approved (the sender was linked another way). */
export async function settlePairingsOf(
  db: Queryable,
  channel: string,
  senderId: string,
  userId: string,
): Promise<void> {
  await db.query(
    "UPDATE pairing_codes SET status = 'approved', user_id = $3, approved_at = now() WHERE channel = $1 AND sender_id = $2 AND status = 'pending'",
    [channel, senderId, userId],
  );
}
