export {
  type AudioFormat,
  type AudioInfo,
  type AudioProblem,
  clockDuration,
  inspectAudio,
  isAudioProblem,
} from './audio-format.ts';
export { decodeOggOpus, encodeWav } from './decode-ogg.ts';
export { voiceChecks } from './doctor-check.ts';
export {
  ElevenLabsClient,
  SPEECH_CONTENT_TYPES,
  type SpeechFormat,
  type SpeechResult,
} from './elevenlabs.ts';
export { FULL_TEXT_FOLLOWS, speakableText, spokenReply } from './speakable.ts';
export { transcribe } from './transcribe.ts';
export { CLIP_TTL_MS } from './voice-clips.ts';
export {
  NO_SPEECH_MODEL,
  NOTHING_HEARD,
  type TranscriptResult,
  VOICE_UNAVAILABLE,
  VoiceService,
  type VoiceServiceDeps,
} from './voice-service.ts';
