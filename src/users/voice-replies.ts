import type { Queryable } from '../db/index.ts';

/** How a user wants replies: `auto` answers voice with voice, `text` always writes, `voice` always speaks. */
export type VoiceReplies = 'auto' | 'text' | 'voice';

const ALIASES: Record<string, VoiceReplies> = {
  auto: 'auto',
  'voice-to-voice': 'auto',
  match: 'auto',
  default: 'auto',
  text: 'text',
  'always-text': 'text',
  never: 'text',
  off: 'text',
  voice: 'voice',
  'always-voice': 'voice',
  always: 'voice',
};

/** Reads a preference as people write it (`voice-to-voice`, `always_text`, `Voice`); null when unknown. */
export function parseVoiceReplies(value: string): VoiceReplies | null {
  return ALIASES[value.trim().toLowerCase().replaceAll('_', '-').replaceAll(' ', '-')] ?? null;
}

export async function voiceRepliesOf(db: Queryable, userId: string): Promise<VoiceReplies> {
  const rows = await db.query<{ voice_replies: VoiceReplies }>(
    'SELECT voice_replies FROM users WHERE id = $1',
    [userId],
  );
  return rows[0]?.voice_replies ?? 'auto';
}

export async function setVoiceReplies(db: Queryable, userId: string, value: VoiceReplies): Promise<void> {
  const rows = await db.query('UPDATE users SET voice_replies = $2 WHERE id = $1 RETURNING id', [
    userId,
    value,
  ]);
  if (rows.length === 0) throw new Error(`No user ${userId}.`);
}
