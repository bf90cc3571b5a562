import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApiToken, ensureUser } from '../src/users/index.ts';
import { decodeOggOpus } from '../src/voice/decode-ogg.ts';
import { type Backend, backends } from './support/db.ts';
import {
  FAKE_ELEVENLABS_KEY,
  FAKE_VOICE_ID,
  type FakeElevenLabs,
  SPOKEN_MP3,
  startFakeElevenLabs,
} from './support/fake-elevenlabs.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { startTestSteward, type TestSteward } from './support/steward.ts';
import {
  audioPartOf,
  SILENCE_OGG,
  SPOKEN_WORDS,
  VOICE_NOTE_OGG,
  VOICE_NOTE_WAV,
  VOICE_NOTE_WEBM,
} from './support/voice.ts';

// Each test waits for real HTTP round trips through a loaded machine.
vi.setConfig({ testTimeout: 60_000 });

const OWNER_TOKEN = 'owner-token-0123456789';
const ANSWER = 'Done: I will remind you to call Ana tomorrow at nine.';

async function voiceApp(
  backend: Backend,
  llm: FakeLlm,
  elevenlabs: FakeElevenLabs,
  llmYaml = '',
): Promise<{ steward: TestSteward; app: Hono }> {
  const steward = await startTestSteward(backend, llm, {
    llmYaml,
    extraYaml: `api_token: "${OWNER_TOKEN}"
voice:
  max_bytes: 200000
  elevenlabs:
    api_key: "${FAKE_ELEVENLABS_KEY}"
    voice_id: "${FAKE_VOICE_ID}"
    api_url: "${elevenlabs.url}"
    retry_delay_ms: 50
`,
  });
  const { runtime } = steward;
  // The app `steward start` serves, built by the same root.
  const { app } = await runtime.http();
  return { steward, app };
}

const auth = (token = OWNER_TOKEN) => ({ authorization: `Bearer ${token}` });

for (const backend of backends()) {
  describe(`POST /api/voice [${backend}]`, () => {
    let llm: FakeLlm;
    let elevenlabs: FakeElevenLabs;
    let steward: TestSteward;
    let app: Hono;
    const postAudio = (body: RequestInit['body'], contentType: string | null, token = OWNER_TOKEN) =>
      app.request('/api/voice', {
        method: 'POST',
        headers: { ...auth(token), ...(contentType ? { 'content-type': contentType } : {}) },
        body,
      });

    beforeAll(async () => {
      llm = await startFakeLlm();
      elevenlabs = await startFakeElevenLabs();
      ({ steward, app } = await voiceApp(backend, llm, elevenlabs));
    });
    afterAll(async () => {
      await steward?.close();
      await elevenlabs?.close();
      await llm?.close();
    });

    it('transcribes raw Ogg audio, runs a single_loop turn, and serves the MP3 answer once, with the token', async () => {
      const before = llm.chatRequests.length;
      llm.enqueue({ text: SPOKEN_WORDS }, { text: ANSWER });
      const response = await postAudio(VOICE_NOTE_OGG, 'audio/ogg');
      expect(response.status).toBe(200);
      const body = (await response.json()) as {
        transcript: string;
        reply: string;
        audio_url: string;
        turnId: string;
      };
      expect(body).toMatchObject({ transcript: SPOKEN_WORDS, reply: ANSWER });
      expect(audioPartOf(llm.chatRequests[before]!)).toEqual({
        data: VOICE_NOTE_OGG.toString('base64'),
        format: 'ogg',
      });
      const modes = await steward.runtime.database.query<{ mode: string }>(
        'SELECT mode FROM turns WHERE id = $1',
        [body.turnId],
      );
      expect(modes[0]?.mode).toBe('single_loop');
      expect(elevenlabs.speech.at(-1)).toMatchObject({ outputFormat: 'mp3_44100_128', text: ANSWER });
      const url = new URL(body.audio_url);
      expect(url.pathname).toMatch(/^\/api\/voice\/audio\/[\w-]+$/);
      expect((await app.request(url.pathname)).status).toBe(401);
      await ensureUser(steward.runtime.database, 'someone-else');
      const { token: otherToken } = await createApiToken(steward.runtime.database, 'someone-else');
      expect((await app.request(url.pathname, { headers: auth(otherToken) })).status).toBe(404);
      const audio = await app.request(url.pathname, { headers: auth() });
      expect(audio.status).toBe(200);
      expect(audio.headers.get('content-type')).toBe('audio/mpeg');
      expect(Buffer.from(await audio.arrayBuffer())).toEqual(SPOKEN_MP3);
      expect((await app.request(url.pathname, { headers: auth() })).status).toBe(404);
      llm.assertDone();
    });

    it("transcribes a browser's MediaRecorder upload (Opus in WebM), passing the speech on as Ogg/Opus", async () => {
      const before = llm.chatRequests.length;
      llm.enqueue({ text: SPOKEN_WORDS }, { text: ANSWER });
      const form = new FormData();
      form.set('audio', new Blob([VOICE_NOTE_WEBM], { type: 'audio/webm;codecs=opus' }), 'recording.webm');
      const response = await app.request('/api/voice', { method: 'POST', headers: auth(), body: form });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ transcript: SPOKEN_WORDS, reply: ANSWER });
      const part = audioPartOf(llm.chatRequests[before]!)!;
      expect(part.format).toBe('ogg');
      const decoded = await decodeOggOpus(Buffer.from(part.data, 'base64'));
      expect(decoded.seconds).toBeGreaterThan(2.5);
      expect(decoded.seconds).toBeLessThan(3.5);
      llm.assertDone();
    });

    it('takes a multipart upload (WAV), and its audio URL expires after 10 minutes', async () => {
      const before = llm.chatRequests.length;
      llm.enqueue({ text: SPOKEN_WORDS }, { text: ANSWER });
      const form = new FormData();
      form.set('audio', new Blob([VOICE_NOTE_WAV], { type: 'audio/wav' }), 'note.wav');
      const response = await postAudio(form, null);
      expect(response.status).toBe(200);
      const body = (await response.json()) as { audio_url: string };
      expect(audioPartOf(llm.chatRequests[before]!)?.format).toBe('wav');
      await steward.runtime.database.query(
        "UPDATE voice_clips SET expires_at = now() - interval '1 second' WHERE expires_at > now()",
      );
      expect((await app.request(new URL(body.audio_url).pathname, { headers: auth() })).status).toBe(404);
      llm.assertDone();
    });

    it('with ElevenLabs failing twice, answers in text with a notice about voice and no audio_url', async () => {
      const speech = elevenlabs.speech.length;
      llm.enqueue({ text: SPOKEN_WORDS }, { text: ANSWER });
      elevenlabs.failNext({ status: 500, json: {} }, { status: 502, json: {} });
      const response = await postAudio(VOICE_NOTE_OGG, 'audio/ogg');
      expect(response.status).toBe(200);
      const body = (await response.json()) as { reply: string; audio_url: string | null };
      expect(body.audio_url).toBeNull();
      expect(body.reply).toContain(ANSWER);
      expect(body.reply.toLowerCase()).toContain('voice');
      expect(elevenlabs.speech.length).toBe(speech + 2);
      llm.assertDone();
    });

    it('refuses empty, damaged, unsupported and oversized audio with what was wrong, calling no model', async () => {
      const before = llm.chatRequests.length;
      const empty = await postAudio(new Uint8Array(0), 'audio/ogg');
      expect(empty.status).toBe(400);
      expect(((await empty.json()) as { message: string }).message).toContain('empty');
      const damaged = await postAudio(Buffer.from('OggS cut off here'), 'audio/ogg');
      expect(damaged.status).toBe(400);
      expect(((await damaged.json()) as { message: string }).message).toMatch(/damaged|cut off/);
      const webm = await postAudio(Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 1, 2, 3, 4]), 'audio/webm');
      expect(webm.status).toBe(400);
      expect(((await webm.json()) as { message: string }).message).toMatch(
        /not valid WebM .*damaged or cut off/,
      );
      const mp4 = await postAudio(Buffer.from('\0\0\0\x18ftypM4A \0\0\0\0'), 'audio/mp4');
      expect(mp4.status).toBe(415);
      expect(((await mp4.json()) as { message: string }).message).toContain('MP4/M4A');
      const text = await postAudio('hello', 'text/plain');
      expect(text.status).toBe(415);
      const huge = await postAudio(new Uint8Array(300_000), 'audio/wav');
      expect(huge.status).toBe(413);
      expect(((await huge.json()) as { message: string }).message).toContain('voice.max_bytes');
      expect(llm.chatRequests.length).toBe(before);
      llm.assertDone();
    });

    it('stops reading a streamed upload at voice.max_bytes, never buffering the rest', async () => {
      const chunk = new Uint8Array(16 * 1024);
      let pulled = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (pulled >= 8 * 1024 * 1024) return controller.close();
          pulled += chunk.byteLength;
          controller.enqueue(chunk);
        },
      });
      const response = await app.request('/api/voice', {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'audio/ogg' },
        body,
        duplex: 'half',
      } as RequestInit);
      expect(response.status).toBe(413);
      expect(((await response.json()) as { message: string }).message).toContain('voice.max_bytes');
      // max_bytes is 200,000 here (plus 64 KB for a form's wrapping).
      expect(pulled).toBeLessThan(200_000 + 128 * 1024);
    });

    it('says it could not hear anything when the transcript is empty, and runs no turn', async () => {
      const before = llm.chatRequests.length;
      llm.enqueue({ text: '(no speech)' });
      const response = await postAudio(SILENCE_OGG, 'audio/ogg');
      expect(response.status).toBe(200);
      const body = (await response.json()) as { transcript: string; reply: string; audio_url: null };
      expect(body).toMatchObject({ transcript: '', audio_url: null });
      expect(body.reply).toContain('could not hear anything');
      expect(llm.chatRequests.length).toBe(before + 1);
      llm.assertDone();
    });
  });
}

describe('voice notes for a model that takes only WAV or MP3', () => {
  let llm: FakeLlm;
  let elevenlabs: FakeElevenLabs;
  let steward: TestSteward;
  let app: Hono;
  beforeAll(async () => {
    llm = await startFakeLlm();
    elevenlabs = await startFakeElevenLabs();
    ({ steward, app } = await voiceApp(
      backends()[0]!,
      llm,
      elevenlabs,
      '  models:\n    - { id: "test/orchestrator", audio_formats: [wav, mp3] }\n',
    ));
  });
  afterAll(async () => {
    await steward?.close();
    await elevenlabs?.close();
    await llm?.close();
  });

  it('decodes the Ogg/Opus note to WAV in-process before sending it', async () => {
    llm.enqueue({ text: SPOKEN_WORDS }, { text: ANSWER });
    const response = await app.request('/api/voice', {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'audio/ogg' },
      body: VOICE_NOTE_OGG,
    });
    expect(response.status).toBe(200);
    const part = audioPartOf(llm.chatRequests[0]!)!;
    expect(part.format).toBe('wav');
    const wav = Buffer.from(part.data, 'base64');
    expect(wav.subarray(0, 4).toString('latin1')).toBe('RIFF');
    // 16 kHz mono 16-bit: about 2.9 s of speech.
    const seconds = (wav.length - 44) / 32_000;
    expect(seconds).toBeGreaterThan(2.5);
    expect(seconds).toBeLessThan(3.5);
    llm.assertDone();
  });

  it('decodes a WebM recording to WAV in-process before sending it', async () => {
    llm.enqueue({ text: SPOKEN_WORDS }, { text: ANSWER });
    const response = await app.request('/api/voice', {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'audio/webm' },
      body: VOICE_NOTE_WEBM,
    });
    expect(response.status).toBe(200);
    const part = audioPartOf(llm.chatRequests.at(-2)!)!;
    expect(part.format).toBe('wav');
    const seconds = (Buffer.from(part.data, 'base64').length - 44) / 32_000;
    expect(seconds).toBeGreaterThan(2.5);
    expect(seconds).toBeLessThan(3.5);
    llm.assertDone();
  });
});
