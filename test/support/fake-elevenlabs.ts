import { readFileSync } from 'node:fs';
import { type FakeHttp, type FakeReply, startFakeHttp } from './fake-http.ts';

/*
 * A fake ElevenLabs API: `POST /v1/text-to-speech/{voice_id}?output_format=…` answers real
 * audio in the asked format (an Ogg/Opus voice note made with espeak-ng and opusenc, or MP3
 * frames), `GET /v1/voices/{voice_id}` for doctor. Checks `xi-api-key`; failures scriptable.
 */

export const FAKE_ELEVENLABS_KEY = 'sk_fake_elevenlabs_key_0123456789';
export const FAKE_VOICE_ID = 'JBFqnCBsd6RMkjVDRZzb';

/** Real speech (Ogg/Opus), the fake's answer to every opus_* request. */
export const SPOKEN_OGG = readFileSync(new URL('../fixtures/voice/voice-note.ogg', import.meta.url));

/** A few MPEG-1 Layer III frames (128 kb/s, 44.1 kHz) of silence: enough to be MP3. */
export const SPOKEN_MP3 = Buffer.concat(
  Array.from({ length: 8 }, () => Buffer.concat([Buffer.from([0xff, 0xfb, 0x90, 0x64]), Buffer.alloc(413)])),
);

export type SpeechRequest = { voiceId: string; outputFormat: string | null; text: string; modelId: string };

export type FakeElevenLabs = FakeHttp & {
  readonly speech: SpeechRequest[];
  /** Scripted answers for the next text-to-speech calls, in order (e.g. two 500s). */
  failNext(...replies: FakeReply[]): void;
};

export async function startFakeElevenLabs(): Promise<FakeElevenLabs> {
  const speech: SpeechRequest[] = [];
  const scripted: FakeReply[] = [];
  const http = await startFakeHttp((request) => {
    if (request.headers['xi-api-key'] !== FAKE_ELEVENLABS_KEY) {
      return { status: 401, json: { detail: { status: 'invalid_api_key', message: 'Invalid API key' } } };
    }
    const voice = /^\/v1\/voices\/([^/]+)$/.exec(request.path);
    if (voice && request.method === 'GET') {
      return voice[1] === FAKE_VOICE_ID
        ? { status: 200, json: { voice_id: FAKE_VOICE_ID, name: 'George' } }
        : { status: 404, json: { detail: { status: 'voice_not_found' } } };
    }
    const tts = /^\/v1\/text-to-speech\/([^/]+)$/.exec(request.path);
    if (!tts || request.method !== 'POST') return { status: 404, json: { detail: 'Not Found' } };
    const body = (request.body ?? {}) as { text?: string; model_id?: string };
    const outputFormat = request.query.get('output_format');
    speech.push({
      voiceId: tts[1]!,
      outputFormat,
      text: String(body.text ?? ''),
      modelId: String(body.model_id ?? ''),
    });
    if (scripted.length) return scripted.shift()!;
    if (tts[1] !== FAKE_VOICE_ID) return { status: 404, json: { detail: { status: 'voice_not_found' } } };
    if (!body.text) return { status: 422, json: { detail: 'text is required' } };
    if (outputFormat?.startsWith('opus_')) {
      return { status: 200, bytes: SPOKEN_OGG, headers: { 'content-type': 'audio/ogg' } };
    }
    if (outputFormat?.startsWith('mp3_') || outputFormat === null) {
      return { status: 200, bytes: SPOKEN_MP3, headers: { 'content-type': 'audio/mpeg' } };
    }
    return { status: 400, json: { detail: `unsupported output_format ${outputFormat}` } };
  });
  return { ...http, speech, failNext: (...replies) => scripted.push(...replies) };
}
