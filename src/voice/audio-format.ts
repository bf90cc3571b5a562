/** Audio formats a speech model takes as `input_audio`. */
export type AudioFormat = 'ogg' | 'wav' | 'mp3' | 'flac';

export type AudioInfo = {
  format: AudioFormat;
  /** Length in seconds, read from the container; null when it cannot be told without decoding. */
  durationSeconds: number | null;
};

/** Why audio cannot be taken, as the user is told it. */
export type AudioProblem = {
  problem: string;
  code: 'empty' | 'corrupt' | 'unsupported' | 'too_long' | 'too_big';
};

const SUPPORTED =
  'Send a voice note (Ogg/Opus, or Opus in WebM as browsers record), or WAV, MP3 or FLAC audio.';

const ascii = (bytes: Uint8Array, start: number, length: number) =>
  String.fromCharCode(...bytes.subarray(start, start + length));

const view = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** `m:ss` (or `h:mm:ss`), for messages. */
export function clockDuration(seconds: number): string {
  const total = Math.round(seconds);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

/** Ogg: the last page's granule position over the codec's rate (Opus: 48 kHz less pre-skip). */
function oggDuration(bytes: Uint8Array): number | null | 'corrupt' {
  const data = view(bytes);
  // The first page carries the codec's identification header.
  const segments = bytes[26] ?? 0;
  const body = 27 + segments;
  let rate: number;
  let preSkip = 0;
  if (ascii(bytes, body, 8) === 'OpusHead') {
    if (bytes.length < body + 19) return 'corrupt';
    rate = 48_000;
    preSkip = data.getUint16(body + 10, true);
  } else if (ascii(bytes, body + 1, 6) === 'vorbis') {
    if (bytes.length < body + 16) return 'corrupt';
    rate = data.getUint32(body + 12, true);
  } else {
    return 'corrupt';
  }
  // The last page: search back for its capture pattern.
  for (let at = bytes.length - 27; at >= 0; at--) {
    if (bytes[at] !== 0x4f || ascii(bytes, at, 4) !== 'OggS') continue;
    const granule = Number(data.getBigInt64(at + 6, true));
    if (granule < 0 || rate <= 0) return 'corrupt';
    return Math.max(0, (granule - preSkip) / rate);
  }
  return 'corrupt';
}

/** WAV: the data chunk's size over the byte rate from `fmt `. */
function wavDuration(bytes: Uint8Array): number | 'corrupt' {
  const data = view(bytes);
  let byteRate = 0;
  for (let at = 12; at + 8 <= bytes.length; ) {
    const id = ascii(bytes, at, 4);
    const size = data.getUint32(at + 4, true);
    if (id === 'fmt ' && at + 16 <= bytes.length) byteRate = data.getUint32(at + 16, true);
    if (id === 'data') {
      if (!byteRate) return 'corrupt';
      const available = Math.min(size, bytes.length - at - 8);
      return available / byteRate;
    }
    at += 8 + size + (size % 2);
  }
  return 'corrupt';
}

const MP3_BITRATES_V1_L3 = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const MP3_BITRATES_V2_L3 = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];

/** MP3: the size over the first frame's bitrate (an estimate for variable bitrates). */
function mp3Duration(bytes: Uint8Array, start: number): number | null {
  for (let at = start; at + 4 <= Math.min(bytes.length, start + 64 * 1024); at++) {
    if (bytes[at] !== 0xff || ((bytes[at + 1] ?? 0) & 0xe0) !== 0xe0) continue;
    const version = ((bytes[at + 1] ?? 0) >> 3) & 3; // 3 = MPEG-1
    const index = ((bytes[at + 2] ?? 0) >> 4) & 15;
    const kbps = (version === 3 ? MP3_BITRATES_V1_L3 : MP3_BITRATES_V2_L3)[index];
    if (!kbps) continue;
    return ((bytes.length - at) * 8) / (kbps * 1000);
  }
  return null;
}

/** FLAC: STREAMINFO's total samples over its sample rate. */
function flacDuration(bytes: Uint8Array): number | null {
  if (bytes.length < 26) return null;
  const data = view(bytes);
  const rate = (data.getUint32(18) >>> 12) & 0xfffff;
  const high = bytes[21]! & 0x0f;
  const samples = high * 2 ** 32 + data.getUint32(22);
  return rate && samples ? samples / rate : null;
}

function sniff(bytes: Uint8Array): AudioFormat | 'webm' | 'mp4' | null {
  if (ascii(bytes, 0, 4) === 'OggS') return 'ogg';
  if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 4) === 'WAVE') return 'wav';
  if (ascii(bytes, 0, 4) === 'fLaC') return 'flac';
  if (ascii(bytes, 0, 3) === 'ID3' || (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0)) return 'mp3';
  if (bytes[0] === 0x1a && bytes[1] === 0x45 && bytes[2] === 0xdf && bytes[3] === 0xa3) return 'webm';
  if (ascii(bytes, 4, 4) === 'ftyp') return 'mp4';
  return null;
}

/**
 * What the audio is and how long it lasts, from its bytes (the declared type is only used in
 * messages): refuses empty, unreadable, unsupported, too large or too long audio with a
 * reason the user can act on.
 */
export function inspectAudio(
  bytes: Uint8Array,
  limits: { maxSeconds: number; maxBytes: number },
  declaredType?: string | null,
): AudioInfo | AudioProblem {
  if (bytes.length === 0) {
    return {
      code: 'empty',
      problem: 'That voice note is empty: there is no audio in it. Please record it again.',
    };
  }
  if (bytes.length > limits.maxBytes) {
    return {
      code: 'too_big',
      problem: `That audio is ${(bytes.length / 1e6).toFixed(1)} MB; I take up to ${(limits.maxBytes / 1e6).toFixed(1)} MB (voice.max_bytes). Please send a shorter recording.`,
    };
  }
  const kind = sniff(bytes);
  if (kind === null || kind === 'webm' || kind === 'mp4') {
    const what =
      kind === 'webm'
        ? 'WebM'
        : kind === 'mp4'
          ? 'MP4/M4A'
          : declaredType
            ? `"${declaredType}"`
            : 'this format';
    const problem =
      kind === null && (declaredType?.startsWith('audio/ogg') || declaredType?.startsWith('audio/opus'))
        ? 'I could not read that audio: it is not valid Ogg/Opus (the file is damaged or cut off). Please record it again.'
        : `I cannot read audio in ${what}. ${SUPPORTED}`;
    return { code: kind === null && problem.includes('damaged') ? 'corrupt' : 'unsupported', problem };
  }
  let duration: number | null | 'corrupt';
  try {
    duration =
      kind === 'ogg'
        ? oggDuration(bytes)
        : kind === 'wav'
          ? wavDuration(bytes)
          : kind === 'flac'
            ? flacDuration(bytes)
            : mp3Duration(bytes, kind === 'mp3' && ascii(bytes, 0, 3) === 'ID3' ? id3Length(bytes) : 0);
  } catch {
    duration = 'corrupt';
  }
  if (duration === 'corrupt') {
    return {
      code: 'corrupt',
      problem: `I could not read that audio: it is not valid ${kind === 'ogg' ? 'Ogg/Opus' : kind.toUpperCase()} (the file is damaged or cut off). Please record it again.`,
    };
  }
  if (duration !== null && duration > limits.maxSeconds) return tooLong(duration, limits.maxSeconds);
  return { format: kind, durationSeconds: duration };
}

export function tooLong(seconds: number, maxSeconds: number): AudioProblem {
  return {
    code: 'too_long',
    problem: `That voice note is ${clockDuration(seconds)} long; I take up to ${clockDuration(maxSeconds)} (voice.max_seconds). Please split it into shorter notes, or write it out.`,
  };
}

/** Bytes an ID3v2 tag takes at the start of an MP3 file. */
function id3Length(bytes: Uint8Array): number {
  const size =
    ((bytes[6]! & 0x7f) << 21) | ((bytes[7]! & 0x7f) << 14) | ((bytes[8]! & 0x7f) << 7) | (bytes[9]! & 0x7f);
  return 10 + size;
}

export const isAudioProblem = (value: AudioInfo | AudioProblem): value is AudioProblem => 'problem' in value;
