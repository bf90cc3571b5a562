import type { ResolvedConfig } from '../config/index.ts';
import { modelFor } from '../config/index.ts';
import type { Database } from '../db/index.ts';
import { errorMessage, StewardError } from '../errors.ts';
import { type LlmClient, LlmError } from '../llm/index.ts';
import type { Logger } from '../logging/index.ts';
import { voiceRepliesOf } from '../users/index.ts';
import { type AudioFormat, inspectAudio, isAudioProblem, tooLong } from './audio-format.ts';
import { decodeOggOpus, encodeWav } from './decode-ogg.ts';
import { ElevenLabsClient, type SpeechFormat, type SpeechResult } from './elevenlabs.ts';
import { spokenReply } from './speakable.ts';
import { transcribe } from './transcribe.ts';
import { storeClip, takeClip } from './voice-clips.ts';
import { isWebm, webmOpusToOgg } from './webm-opus.ts';

/* What Steward says about voice on its own. */
export const NOTHING_HEARD =
  'I could not hear anything in that voice note. Please try again closer to the microphone, or write it out.';
export const VOICE_UNAVAILABLE = "I can't send a voice reply right now, so here is my answer in text.";
export const NO_SPEECH_MODEL =
  'I cannot listen to voice notes yet: no LLM is configured to transcribe them. Please write it out.';

export type TranscriptResult =
  | { ok: true; transcript: string; seconds: number | null; format: AudioFormat }
  /** `reply`: what to tell the user (bad audio, nothing heard, transcription failed). */
  | { ok: false; reply: string; code: string };

export type VoiceServiceDeps = {
  database: Database;
  llm: LlmClient;
  config: () => ResolvedConfig;
  logger: Logger;
  fetch?: typeof fetch;
  now?: () => Date;
  sleep?: (ms: number) => Promise<void>;
};

/**
 * Voice notes in, spoken replies out: checks audio (size, length, format), decodes Ogg/Opus to
 * WAV when the transcription model does not take Ogg, transcribes on the `transcription` role,
 * and speaks replies with ElevenLabs (two attempts; a failure is a value, so callers answer in text).
 */
export class VoiceService {
  readonly #deps: VoiceServiceDeps;
  #speech: { key: string; client: ElevenLabsClient } | null = null;

  constructor(deps: VoiceServiceDeps) {
    this.#deps = deps;
  }

  #now(): Date {
    return this.#deps.now?.() ?? new Date();
  }

  /** Checks, converts and transcribes `recorded`. Never throws for bad audio or a failing model. */
  async transcribe(
    recorded: Uint8Array,
    options: {
      userId: string;
      mimeType?: string | null;
      /** The platform's own idea of the length, refused before downloading when over the limit. */
      declaredSeconds?: number | null;
      signal?: AbortSignal;
    },
  ): Promise<TranscriptResult> {
    const config = this.#deps.config();
    if (config.endpoint.provider === 'none' || !config.roster.roles.transcription) {
      return { ok: false, reply: NO_SPEECH_MODEL, code: 'not_configured' };
    }
    const limits = { maxSeconds: config.voice.max_seconds, maxBytes: config.voice.max_bytes };
    // A browser's recording: its Opus moves into Ogg, and goes on as a voice note.
    const webm = isWebm(recorded) && recorded.length <= limits.maxBytes ? fromWebm(recorded) : null;
    if (webm && 'reply' in webm) return webm;
    const audio = webm ? webm.ogg : recorded;
    const info = inspectAudio(audio, limits, options.mimeType);
    if (isAudioProblem(info)) return { ok: false, reply: info.problem, code: info.code };
    let payload: { data: Uint8Array; format: AudioFormat } = { data: audio, format: info.format };
    let seconds = info.durationSeconds;
    const accepted = this.acceptedFormats(config);
    if (accepted && !accepted.includes(info.format)) {
      if (info.format !== 'ogg' || !accepted.includes('wav')) {
        return {
          ok: false,
          code: 'unsupported',
          reply: `I cannot pass ${info.format.toUpperCase()} audio to the transcription model (it takes ${accepted.join(', ')}). Send a voice note or ${accepted.join('/')} audio.`,
        };
      }
      try {
        const decoded = await decodeOggOpus(audio);
        seconds = decoded.seconds;
        if (seconds > limits.maxSeconds) {
          const problem = tooLong(seconds, limits.maxSeconds);
          return { ok: false, reply: problem.problem, code: problem.code };
        }
        payload = { data: encodeWav(decoded), format: 'wav' };
      } catch (error) {
        this.#deps.logger.info({ err: errorMessage(error) }, 'voice: an Ogg/Opus note did not decode');
        return {
          ok: false,
          code: 'corrupt',
          reply:
            'I could not read that audio: it is not valid Ogg/Opus (the file is damaged or cut off). Please record it again.',
        };
      }
    }
    try {
      const transcript = await transcribe(this.#deps.llm, payload, {
        userId: options.userId,
        signal: options.signal,
      });
      if (!transcript) return { ok: false, reply: NOTHING_HEARD, code: 'nothing_heard' };
      return { ok: true, transcript, seconds, format: info.format };
    } catch (error) {
      if (!(error instanceof LlmError)) throw error;
      this.#deps.logger.warn({ err: error.message, class: error.errorClass }, 'voice: transcription failed');
      const hint =
        error.errorClass === 'bad_request'
          ? ' (the transcription model may not take audio: set llm.roles.transcription to a model that does)'
          : '';
      return {
        ok: false,
        code: 'transcription_failed',
        reply: `I could not transcribe that voice note right now${hint}. Please try again in a moment, or write it out.`,
      };
    }
  }

  /** Formats the transcription model takes (null: any), from its roster entry's `audio_formats`. */
  acceptedFormats(config: ResolvedConfig): readonly AudioFormat[] | null {
    const role = config.roster.roles.transcription;
    return role ? (modelFor(config.roster, role.model).audio_formats ?? null) : null;
  }

  /** Longest and largest audio taken (`voice.max_seconds`, `voice.max_bytes`). */
  get limits(): { maxSeconds: number; maxBytes: number } {
    const { voice } = this.#deps.config();
    return { maxSeconds: voice.max_seconds, maxBytes: voice.max_bytes };
  }

  /** Whether spoken replies can be made (ElevenLabs key and voice set). */
  get speechConfigured(): boolean {
    const { api_key, voice_id } = this.#deps.config().voice.elevenlabs;
    return Boolean(api_key && voice_id);
  }

  /** Whether this reply should be spoken: the user's preference, and speech configured. */
  async wantsVoice(userId: string, toVoiceNote: boolean): Promise<boolean> {
    if (!this.speechConfigured) return false;
    const preference = await voiceRepliesOf(this.#deps.database, userId);
    return preference === 'voice' || (preference === 'auto' && toVoiceNote);
  }

  /**
   * The reply spoken in `format`: all of it when short, else a summary (`long`: send the full
   * text too). `ok: false` after two failed attempts (or with speech not configured).
   */
  async speak(
    reply: string,
    format: SpeechFormat,
    signal?: AbortSignal,
  ): Promise<SpeechResult & { long: boolean }> {
    const { spoken, long } = spokenReply(reply, this.#deps.config().voice.long_reply_chars);
    const client = this.#client();
    if (!client) return { ok: false, error: 'ElevenLabs is not configured', attempts: 0, long };
    const result = await client.speak(spoken, format, signal);
    if (!result.ok)
      this.#deps.logger.warn(
        { error: result.error, attempts: result.attempts },
        'voice: speech failed; answering in text',
      );
    return { ...result, long };
  }

  #client(): ElevenLabsClient | null {
    const { elevenlabs } = this.#deps.config().voice;
    if (!elevenlabs.api_key || !elevenlabs.voice_id) return null;
    const key = JSON.stringify(elevenlabs);
    if (this.#speech?.key !== key) {
      this.#speech = {
        key,
        client: new ElevenLabsClient({
          apiKey: elevenlabs.api_key,
          voiceId: elevenlabs.voice_id,
          apiUrl: elevenlabs.api_url,
          modelId: elevenlabs.model_id,
          timeoutMs: elevenlabs.timeout_ms,
          retryDelayMs: elevenlabs.retry_delay_ms,
          fetch: this.#deps.fetch,
          sleep: this.#deps.sleep,
        }),
      };
    }
    return this.#speech.client;
  }

  /** Keeps a spoken reply for one fetch within 10 minutes; returns its id. */
  storeClip(userId: string, audio: Uint8Array, contentType: string): Promise<string> {
    return storeClip(this.#deps.database, { userId, audio, contentType }, this.#now());
  }

  /** The clip, once, to its own user (or the owner with `userId` null). */
  takeClip(id: string, userId: string | null): Promise<{ contentType: string; audio: Uint8Array } | null> {
    if (!/^[A-Za-z0-9_-]{16,64}$/.test(id)) return Promise.resolve(null);
    return takeClip(this.#deps.database, id, userId, this.#now());
  }
}

/** A browser recording (Opus in WebM) as Ogg/Opus, or what to tell the user when it cannot be read. */
function fromWebm(
  audio: Uint8Array,
): { ogg: Uint8Array } | { ok: false; reply: string; code: 'corrupt' | 'unsupported' } {
  try {
    return { ogg: webmOpusToOgg(audio) };
  } catch (error) {
    if (!(error instanceof StewardError)) throw error;
    return error.code === 'unsupported_audio'
      ? {
          ok: false,
          code: 'unsupported',
          reply: `I cannot read that recording: ${error.message}. Record with Opus (audio/webm;codecs=opus), or send Ogg/Opus, WAV, MP3 or FLAC audio.`,
        }
      : {
          ok: false,
          code: 'corrupt',
          reply: `I could not read that audio: it is ${error.message}. Please record it again.`,
        };
  }
}
