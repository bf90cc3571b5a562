import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { inspectAudio } from './audio-format.ts';
import { decodeOggOpus, encodeWav } from './decode-ogg.ts';

const fixture = (name: string) =>
  new Uint8Array(readFileSync(new URL(`../../test/fixtures/voice/${name}`, import.meta.url)));
const LIMITS = { maxSeconds: 600, maxBytes: 20_000_000 };

describe('inspectAudio', () => {
  it('tells the format and length of real recordings from their containers', () => {
    const ogg = inspectAudio(fixture('voice-note.ogg'), LIMITS);
    expect(ogg).toMatchObject({ format: 'ogg' });
    expect('durationSeconds' in ogg && ogg.durationSeconds).toBeCloseTo(2.87, 1);
    const wav = inspectAudio(fixture('voice-note.wav'), LIMITS);
    expect(wav).toMatchObject({ format: 'wav' });
    expect('durationSeconds' in wav && wav.durationSeconds).toBeCloseTo(2.87, 1);
  });

  it('refuses what is too long, too big, empty, damaged or unsupported, saying which', () => {
    expect(inspectAudio(fixture('voice-note.ogg'), { maxSeconds: 2, maxBytes: 1e6 })).toMatchObject({
      code: 'too_long',
      problem: expect.stringContaining('0:03 long; I take up to 0:02'),
    });
    expect(inspectAudio(fixture('voice-note.ogg'), { maxSeconds: 60, maxBytes: 1000 })).toMatchObject({
      code: 'too_big',
    });
    expect(inspectAudio(new Uint8Array(0), LIMITS)).toMatchObject({ code: 'empty' });
    expect(inspectAudio(fixture('voice-note.ogg').slice(0, 40), LIMITS)).toMatchObject({ code: 'corrupt' });
    expect(inspectAudio(new TextEncoder().encode('hello there, not audio'), LIMITS)).toMatchObject({
      code: 'unsupported',
      problem: expect.stringContaining('Ogg/Opus'),
    });
  });
});

describe('decodeOggOpus', () => {
  it('decodes a real voice note to 16 kHz WAV of the same length', async () => {
    const decoded = await decodeOggOpus(fixture('voice-note.ogg'));
    expect(decoded.seconds).toBeCloseTo(2.87, 1);
    const wav = encodeWav(decoded);
    const info = inspectAudio(wav, LIMITS);
    expect(info).toMatchObject({ format: 'wav' });
    expect('durationSeconds' in info && info.durationSeconds).toBeCloseTo(decoded.seconds, 1);
    // Speech, not silence.
    const peak = decoded.samples.reduce((max, sample) => Math.max(max, Math.abs(sample)), 0);
    expect(peak).toBeGreaterThan(0.1);
  });

  it('refuses data that decodes to nothing', async () => {
    await expect(decodeOggOpus(new TextEncoder().encode('OggS and then garbage'))).rejects.toThrow(
      /no audio/,
    );
  });
});
