import { randomBytes } from 'node:crypto';
import type { Queryable } from '../db/index.ts';

/** How long a spoken reply of the web endpoint waits to be fetched. */
export const CLIP_TTL_MS = 10 * 60_000;

/** Stores a spoken reply for one fetch; returns its unguessable id. Expired clips are dropped here. */
export async function storeClip(
  db: Queryable,
  clip: { userId: string; contentType: string; audio: Uint8Array },
  now: Date,
): Promise<string> {
  const id = randomBytes(24).toString('base64url');
  await db.query('DELETE FROM voice_clips WHERE expires_at <= $1', [now]);
  await db.query(
    'INSERT INTO voice_clips (id, user_id, content_type, audio, expires_at) VALUES ($1, $2, $3, $4, $5)',
    [id, clip.userId, clip.contentType, Buffer.from(clip.audio), new Date(now.getTime() + CLIP_TTL_MS)],
  );
  return id;
}

/**
 * Takes the clip out: it is served once. Null when unknown, already fetched, expired, or when
 * `userId` (unless null: the owner) is not the clip's user — which leaves it in place.
 */
export async function takeClip(
  db: Queryable,
  id: string,
  userId: string | null,
  now: Date,
): Promise<{ contentType: string; audio: Uint8Array } | null> {
  const rows = await db.query<{ content_type: string; audio: Uint8Array }>(
    `DELETE FROM voice_clips WHERE id = $1 AND expires_at > $2 AND ($3::text IS NULL OR user_id = $3)
     RETURNING content_type, audio`,
    [id, now, userId],
  );
  const row = rows[0];
  return row ? { contentType: row.content_type, audio: new Uint8Array(row.audio) } : null;
}
