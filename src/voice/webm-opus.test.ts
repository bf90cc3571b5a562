import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { inspectAudio } from './audio-format.ts';
import { decodeOggOpus } from './decode-ogg.ts';
import { oggCrc, webmOpusToOgg } from './webm-opus.ts';

const fixture = (name: string) =>
  new Uint8Array(readFileSync(new URL(`../../test/fixtures/voice/${name}`, import.meta.url)));
/** Chromium's MediaRecorder output (test/fixtures/voice/make-webm.ts) and opusenc's Ogg of the same speech. */
const WEBM = fixture('voice-note.webm');
const OGG = fixture('voice-note.ogg');
const WAV_SECONDS = (fixture('voice-note.wav').length - 44) / 32_000;

/** Each page of an Ogg stream: its bytes, and whether its CRC checks out. */
function pages(ogg: Uint8Array): Array<{ page: Uint8Array; crcOk: boolean; flags: number; granule: bigint }> {
  const out = [];
  for (let at = 0; at < ogg.length; ) {
    expect(String.fromCharCode(...ogg.subarray(at, at + 4))).toBe('OggS');
    const count = ogg[at + 26]!;
    const body = ogg.subarray(at + 27, at + 27 + count).reduce((sum, value) => sum + value, 0);
    const page = ogg.slice(at, at + 27 + count + body);
    const view = new DataView(page.buffer);
    const stored = view.getUint32(22, true);
    view.setUint32(22, 0, true);
    out.push({ page, crcOk: oggCrc(page) === stored, flags: page[5]!, granule: view.getBigInt64(6, true) });
    at += page.length;
  }
  return out;
}

describe('webmOpusToOgg', () => {
  it('computes the CRC opusenc wrote on every page of a real Ogg/Opus file', () => {
    const real = pages(OGG);
    expect(real.length).toBeGreaterThan(2);
    expect(real.every((page) => page.crcOk)).toBe(true);
  });

  it('moves a browser recording into Ogg pages that check out, and it decodes to the whole speech', async () => {
    const ogg = webmOpusToOgg(WEBM);
    const written = pages(ogg);
    expect(written.every((page) => page.crcOk)).toBe(true);
    expect(written[0]!.flags).toBe(0x02); // first page
    expect(written.at(-1)!.flags).toBe(0x04); // last page
    expect(String.fromCharCode(...written[0]!.page.subarray(28, 36))).toBe('OpusHead');
    const info = inspectAudio(ogg, { maxSeconds: 60, maxBytes: 1e7 });
    expect(info).toMatchObject({ format: 'ogg' });
    const decoded = await decodeOggOpus(ogg);
    expect(Math.abs(decoded.seconds - WAV_SECONDS)).toBeLessThan(0.25);
    const rms = Math.sqrt(
      decoded.samples.reduce((sum, sample) => sum + sample * sample, 0) / decoded.samples.length,
    );
    expect(rms).toBeGreaterThan(0.01);
  });

  it('says what is wrong with a damaged recording or one without Opus', () => {
    expect(() => webmOpusToOgg(WEBM.subarray(0, 40))).toThrow(/not valid WebM .*damaged or cut off/);
    const vorbis = WEBM.slice();
    const at = Buffer.from(vorbis).indexOf('A_OPUS');
    vorbis.set(new TextEncoder().encode('A_VORB'), at);
    expect(() => webmOpusToOgg(vorbis)).toThrow('WebM with A_VORB audio; only Opus is read');
  });
});
