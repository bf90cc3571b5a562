import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FAKE_ELEVENLABS_KEY,
  FAKE_VOICE_ID,
  type FakeElevenLabs,
  startFakeElevenLabs,
} from '../../test/support/fake-elevenlabs.ts';
import { loadConfig } from '../config/index.ts';
import { voiceChecks } from './doctor-check.ts';

describe('steward doctor: voice', () => {
  let fake: FakeElevenLabs;
  beforeAll(async () => {
    fake = await startFakeElevenLabs();
  });
  afterAll(() => fake?.close());
  const checks = (env: Record<string, string>) =>
    voiceChecks(
      loadConfig({ env: { LLM_BASE_URL: 'http://127.0.0.1:9/v1', LLM_MODEL: 'm/chat', ...env }, cwd: '/' }),
    );

  it('names the transcription model, and says replies are text while ElevenLabs is not set', async () => {
    const [transcription, replies] = await checks({});
    expect(transcription).toMatchObject({ ok: true, detail: 'model m/chat, voice notes sent as Ogg' });
    expect(replies).toMatchObject({ ok: true, detail: expect.stringContaining('set ELEVENLABS_API_KEY') });
  });

  it('checks the key and voice against ElevenLabs, with the fix for each failure and never the key', async () => {
    const env = { ELEVENLABS_API_URL: fake.url, ELEVENLABS_VOICE_ID: FAKE_VOICE_ID };
    const [, ok] = await checks({ ...env, ELEVENLABS_API_KEY: FAKE_ELEVENLABS_KEY });
    expect(ok).toMatchObject({ ok: true, detail: expect.stringContaining('George') });
    const [, badKey] = await checks({ ...env, ELEVENLABS_API_KEY: 'sk_wrong_key_000000000000' });
    expect(badKey).toMatchObject({ ok: false, fix: expect.stringContaining('ELEVENLABS_API_KEY') });
    expect(JSON.stringify(badKey)).not.toContain('sk_wrong_key');
    const [, badVoice] = await checks({
      ...env,
      ELEVENLABS_API_KEY: FAKE_ELEVENLABS_KEY,
      ELEVENLABS_VOICE_ID: 'nobody',
    });
    expect(badVoice).toMatchObject({ ok: false, fix: expect.stringContaining('ELEVENLABS_VOICE_ID') });
    const [, half] = await checks({ ELEVENLABS_API_KEY: FAKE_ELEVENLABS_KEY });
    expect(half).toMatchObject({ ok: false, detail: 'off: ELEVENLABS_VOICE_ID is missing' });
  });
});
