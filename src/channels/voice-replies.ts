import type { Database } from '../db/index.ts';
import { errorMessage } from '../errors.ts';
import type { Logger } from '../logging/index.ts';
import { clockDuration, VOICE_UNAVAILABLE, type VoiceService } from '../voice/index.ts';
import { lastTranscript, setTranscript } from './inbound-store.ts';
import type { NewOutbound } from './outbox.ts';
import { replyParts } from './reply-parts.ts';
import type { ChannelAdapter, StoredInbound } from './types.ts';

/* Voice notes on chat channels: hearing them, and speaking the answers. */

const DOWNLOAD_TIMEOUT_MS = 60_000;

export const VOICE_NOT_HERE =
  'I cannot listen to voice notes on this channel yet. Please write it out for me.';

/**
 * A voice note's transcript: the one kept from an earlier attempt, or downloaded and
 * transcribed now (and kept). `reply` when it cannot be taken (too long, damaged, silent…).
 * Throws when the platform cannot be reached, so the message is retried.
 */
export async function hearVoiceNote(
  deps: { database: Database; logger: Logger; voice?: VoiceService; adapter?: ChannelAdapter },
  message: StoredInbound,
  userId: string,
): Promise<{ transcript: string } | { reply: string }> {
  if (message.transcript) return { transcript: message.transcript };
  const { voice, adapter } = deps;
  const media = message.media;
  if (!voice || !adapter?.fetchMedia || !media) return { reply: VOICE_NOT_HERE };
  const limits = voice.limits;
  if (media.seconds && media.seconds > limits.maxSeconds) {
    return {
      reply: `That voice note is ${clockDuration(media.seconds)} long; I take up to ${clockDuration(limits.maxSeconds)} (voice.max_seconds). Please split it into shorter notes, or write it out.`,
    };
  }
  if (media.bytes && media.bytes > limits.maxBytes) {
    return {
      reply: `That voice note is ${(media.bytes / 1e6).toFixed(1)} MB; I take up to ${(limits.maxBytes / 1e6).toFixed(1)} MB (voice.max_bytes). Please send a shorter one.`,
    };
  }
  let audio: Uint8Array;
  try {
    audio = await adapter.fetchMedia(media, AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS));
  } catch (error) {
    deps.logger.warn(
      { channel: message.channel, inboundId: message.id, err: errorMessage(error) },
      'voice: could not download a voice note; will retry',
    );
    throw error;
  }
  const heard = await voice.transcribe(audio, {
    userId,
    mimeType: media.mimeType,
    declaredSeconds: media.seconds ?? null,
  });
  if (!heard.ok) return { reply: heard.reply };
  await setTranscript(deps.database, message.id, heard.transcript);
  return { transcript: heard.transcript };
}

/** `/transcript`: what the sender's latest voice note in this chat said. */
export async function lastTranscriptText(database: Database, message: StoredInbound): Promise<string> {
  const last = await lastTranscript(database, message.channel, message.chatId, message.senderId);
  if (!last) return 'I have no voice note of yours in this chat to show the transcript of.';
  return `Your last voice note, as I heard it:\n\n> ${last.transcript.replace(/\n/g, '\n> ')}`;
}

/**
 * The answer's outbox rows. Spoken (an Ogg/Opus voice message) when the channel can send voice
 * and the user wants it; a long answer also goes as text. When speech fails after its two
 * attempts, the answer goes as text with a one-line notice: the reply is never lost.
 */
export async function spokenReplyParts(
  deps: { voice?: VoiceService; adapter?: ChannelAdapter },
  reply: {
    target: Omit<NewOutbound, 'dedupeKey' | 'text' | 'audio'>;
    userId: string;
    text: string;
    key: string;
    toVoiceNote: boolean;
  },
): Promise<NewOutbound[]> {
  const { voice, adapter } = deps;
  const { target, text, key } = reply;
  if (!voice || !adapter?.capabilities.voice || !(await voice.wantsVoice(reply.userId, reply.toVoiceNote))) {
    return replyParts(adapter, target, text, key);
  }
  const speech = await voice.speak(text, 'opus_48000_64');
  if (!speech.ok) return replyParts(adapter, target, `${text}\n\n_${VOICE_UNAVAILABLE}_`, key);
  const voicePart: NewOutbound = {
    ...target,
    dedupeKey: `${key}:voice`,
    // Sent instead if the platform refuses the voice message.
    text: speech.long ? `_${VOICE_UNAVAILABLE}_` : `${text}\n\n_${VOICE_UNAVAILABLE}_`,
    audio: { data: speech.audio, contentType: speech.contentType },
  };
  return speech.long ? [voicePart, ...replyParts(adapter, target, text, key)] : [voicePart];
}
