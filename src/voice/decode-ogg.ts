import { StewardError } from '../errors.ts';

/** Speech rate of the WAV a voice note is decoded to: 16 kHz mono is what speech models use. */
export const WAV_SAMPLE_RATE = 16_000;

export type DecodedAudio = { samples: Float32Array; sampleRate: number; seconds: number };

type Decoder = {
  ready: Promise<void>;
  decodeFile(
    data: Uint8Array,
  ): Promise<{ channelData: Float32Array[]; samplesDecoded: number; sampleRate: number }>;
  free(): void;
};

/**
 * Decodes Ogg/Opus in-process with ogg-opus-decoder (WASM, loaded on first use; no ffmpeg).
 * Throws `StewardError('corrupt_audio')` when nothing decodes.
 */
export async function decodeOggOpus(bytes: Uint8Array): Promise<DecodedAudio> {
  const { OggOpusDecoder } = (await import('ogg-opus-decoder')) as unknown as {
    OggOpusDecoder: new () => Decoder;
  };
  const decoder = new OggOpusDecoder();
  try {
    await decoder.ready;
    const decoded = await decoder.decodeFile(bytes);
    const channels = decoded.channelData.filter((channel) => channel.length > 0);
    if (decoded.samplesDecoded === 0 || channels.length === 0) {
      throw new StewardError('corrupt_audio', 'no audio could be decoded from the Ogg/Opus data');
    }
    const samples = channels.length === 1 ? channels[0]! : downmix(channels);
    return { samples, sampleRate: decoded.sampleRate, seconds: samples.length / decoded.sampleRate };
  } finally {
    decoder.free();
  }
}

function downmix(channels: Float32Array[]): Float32Array {
  const length = Math.min(...channels.map((channel) => channel.length));
  const out = new Float32Array(length);
  for (const channel of channels) for (let i = 0; i < length; i++) out[i]! += channel[i]! / channels.length;
  return out;
}

/** Averages blocks of samples down to `rate` (good enough for speech; 48 kHz → 16 kHz is exact). */
function resample(samples: Float32Array, from: number, to: number): Float32Array {
  if (from === to) return samples;
  const ratio = from / to;
  const out = new Float32Array(Math.floor(samples.length / ratio));
  for (let i = 0; i < out.length; i++) {
    const start = Math.floor(i * ratio);
    const end = Math.max(start + 1, Math.floor((i + 1) * ratio));
    let sum = 0;
    for (let j = start; j < end; j++) sum += samples[j] ?? 0;
    out[i] = sum / (end - start);
  }
  return out;
}

/** 16-bit PCM mono WAV at 16 kHz. */
export function encodeWav(audio: DecodedAudio, rate = WAV_SAMPLE_RATE): Uint8Array {
  const samples = resample(audio.samples, audio.sampleRate, rate);
  const bytes = new Uint8Array(44 + samples.length * 2);
  const data = new DataView(bytes.buffer);
  const text = (at: number, value: string) => {
    for (let i = 0; i < value.length; i++) bytes[at + i] = value.charCodeAt(i);
  };
  text(0, 'RIFF');
  data.setUint32(4, 36 + samples.length * 2, true);
  text(8, 'WAVE');
  text(12, 'fmt ');
  data.setUint32(16, 16, true);
  data.setUint16(20, 1, true); // PCM
  data.setUint16(22, 1, true); // mono
  data.setUint32(24, rate, true);
  data.setUint32(28, rate * 2, true);
  data.setUint16(32, 2, true);
  data.setUint16(34, 16, true);
  text(36, 'data');
  data.setUint32(40, samples.length * 2, true);
  for (let i = 0; i < samples.length; i++) {
    const clamped = Math.max(-1, Math.min(1, samples[i]!));
    data.setInt16(44 + i * 2, Math.round(clamped * 0x7fff), true);
  }
  return bytes;
}
