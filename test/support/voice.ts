import { readFileSync } from 'node:fs';
import { fixture } from './channel-fixtures.ts';
import type { FakeRequest } from './fake-llm.ts';

/* Voice fixtures (real speech from espeak-ng, see test/fixtures/voice/make.sh) and helpers. */

export const VOICE_NOTE_OGG = readFileSync(new URL('../fixtures/voice/voice-note.ogg', import.meta.url));
export const VOICE_NOTE_WAV = readFileSync(new URL('../fixtures/voice/voice-note.wav', import.meta.url));
/** The same speech as a browser records it (MediaRecorder, audio/webm;codecs=opus): see make-webm.ts. */
export const VOICE_NOTE_WEBM = readFileSync(new URL('../fixtures/voice/voice-note.webm', import.meta.url));
export const SILENCE_OGG = readFileSync(new URL('../fixtures/voice/silence.ogg', import.meta.url));

/** What espeak-ng says in the voice note fixtures. */
export const SPOKEN_WORDS = 'Remind me to call Ana tomorrow at nine.';

/** The `input_audio` part of a transcription request, or null. */
export function audioPartOf(request: FakeRequest): { data: string; format: string } | null {
  for (const message of request.body.messages ?? []) {
    if (!Array.isArray(message.content)) continue;
    for (const part of message.content as Array<{
      type?: string;
      input_audio?: { data: string; format: string };
    }>) {
      if (part.type === 'input_audio' && part.input_audio) return part.input_audio;
    }
  }
  return null;
}

/** A Telegram voice-note update with the given ids, file and length. */
export function telegramVoice(options: {
  updateId: number;
  messageId: number;
  fileId: string;
  duration?: number;
  fileSize?: number;
  fromId?: number;
}): Record<string, unknown> {
  const update = fixture<{
    update_id: number;
    message: {
      message_id: number;
      from: { id: number };
      chat: { id: number };
      voice: { file_id: string; duration: number; file_size: number };
    };
  }>('telegram', 'voice-note');
  update.update_id = options.updateId;
  update.message.message_id = options.messageId;
  update.message.voice.file_id = options.fileId;
  if (options.duration !== undefined) update.message.voice.duration = options.duration;
  if (options.fileSize !== undefined) update.message.voice.file_size = options.fileSize;
  if (options.fromId !== undefined) {
    update.message.from.id = options.fromId;
    update.message.chat.id = options.fromId;
  }
  return update;
}
