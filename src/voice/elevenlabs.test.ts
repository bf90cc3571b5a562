import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FAKE_ELEVENLABS_KEY,
  FAKE_VOICE_ID,
  type FakeElevenLabs,
  startFakeElevenLabs,
} from '../../test/support/fake-elevenlabs.ts';
import { gatewayErrorPage } from '../../test/support/fake-http.ts';
import { ElevenLabsClient } from './elevenlabs.ts';

describe('ElevenLabsClient', () => {
  let fake: FakeElevenLabs;
  let client: ElevenLabsClient;
  const waits: number[] = [];
  beforeAll(async () => {
    fake = await startFakeElevenLabs();
    client = new ElevenLabsClient({
      apiKey: FAKE_ELEVENLABS_KEY,
      voiceId: FAKE_VOICE_ID,
      apiUrl: fake.url,
      modelId: 'eleven_multilingual_v2',
      timeoutMs: 2_000,
      retryDelayMs: 1_000,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
  });
  afterAll(() => fake?.close());

  it('asks for the format in the query with the key in xi-api-key, and returns the audio', async () => {
    const result = await client.speak('Hello there.', 'opus_48000_64');
    expect(result).toMatchObject({ ok: true, contentType: 'audio/ogg', attempts: 1 });
    const request = fake.requests.at(-1)!;
    expect(request.path).toBe(`/v1/text-to-speech/${FAKE_VOICE_ID}`);
    expect(request.query.get('output_format')).toBe('opus_48000_64');
    expect(request.headers['xi-api-key']).toBe(FAKE_ELEVENLABS_KEY);
    expect(request.body).toEqual({ text: 'Hello there.', model_id: 'eleven_multilingual_v2' });
  });

  it('retries once after a backoff, then gives up with the reason and never the key', async () => {
    const before = fake.speech.length;
    fake.failNext({ status: 500, json: { detail: 'down' } });
    expect(await client.speak('Once more.', 'mp3_44100_128')).toMatchObject({ ok: true, attempts: 2 });
    expect(waits.at(-1)).toBeGreaterThanOrEqual(800);
    fake.failNext({ status: 500, json: {} }, { status: 429, json: { detail: FAKE_ELEVENLABS_KEY } });
    const failed = await client.speak('Again.', 'mp3_44100_128');
    expect(failed).toMatchObject({ ok: false, attempts: 2, error: expect.stringContaining('429') });
    expect(JSON.stringify(failed)).not.toContain(FAKE_ELEVENLABS_KEY);
    expect(fake.speech.length).toBe(before + 4);
  });

  it('retries a gateway HTML page (5xx) and reports it by its title, not as markup', async () => {
    const before = fake.speech.length;
    fake.failNext(gatewayErrorPage(502));
    expect(await client.speak('Through the outage.', 'opus_48000_64')).toMatchObject({
      ok: true,
      attempts: 2,
    });
    fake.failNext(gatewayErrorPage(503), gatewayErrorPage(504));
    const failed = await client.speak('Still down.', 'opus_48000_64');
    expect(failed).toMatchObject({ ok: false, attempts: 2 });
    expect(!failed.ok && failed.error).toBe('ElevenLabs answered HTTP 504: 504 Gateway Time-out');
    expect(fake.speech.length).toBe(before + 4);
  });

  it('does not retry a refusal (4xx other than 429): the same request would be refused again', async () => {
    const before = fake.speech.length;
    fake.failNext({ status: 422, json: { detail: 'text is too long' } });
    const refused = await client.speak('Refused.', 'mp3_44100_128');
    expect(refused).toMatchObject({ ok: false, attempts: 1, error: expect.stringContaining('422') });
    expect(fake.speech.length).toBe(before + 1);
  });
});
