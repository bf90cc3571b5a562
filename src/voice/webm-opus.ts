import { StewardError } from '../errors.ts';

/*
 * Browsers record audio as Opus in WebM (MediaRecorder's `audio/webm;codecs=opus`). Speech
 * models take Ogg, not WebM, so the Opus packets move, unchanged, from the one container to
 * the other (RFC 7845): nothing is decoded or re-encoded here.
 */

export const isWebm = (bytes: Uint8Array): boolean =>
  bytes[0] === 0x1a && bytes[1] === 0x45 && bytes[2] === 0xdf && bytes[3] === 0xa3;

// Matroska element ids (with their length marker), https://www.matroska.org/technical/elements.html
const SEGMENT = 0x18538067;
const CLUSTER = 0x1f43b675;
const TRACKS = 0x1654ae6b;
const TRACK_ENTRY = 0xae;
const TRACK_NUMBER = 0xd7;
const CODEC_ID = 0x86;
const CODEC_PRIVATE = 0x63a2;
const BLOCK_GROUP = 0xa0;
const BLOCK = 0xa1;
const SIMPLE_BLOCK = 0xa3;
/** Elements whose children are read in place; every other element is skipped whole. */
const CONTAINERS = new Set([SEGMENT, CLUSTER, TRACKS, TRACK_ENTRY, BLOCK_GROUP]);

const corrupt = (why: string) =>
  new StewardError('corrupt_audio', `not valid WebM (${why}): the file is damaged or cut off`);

/** A variable-length integer at `at`: its value (marker removed unless `keepMarker`) and length. */
function readVint(bytes: Uint8Array, at: number, keepMarker: boolean): { value: number; length: number } {
  const first = bytes[at];
  if (first === undefined) throw corrupt('it ends inside an element header');
  let length = 1;
  while (length <= 8 && !(first & (0x80 >> (length - 1)))) length++;
  if (length > 8 || at + length > bytes.length) throw corrupt('an element header is malformed');
  let value = keepMarker ? first : first & (0xff >> length);
  let allOnes = value === 0xff >> length;
  for (let index = 1; index < length; index++) {
    const byte = bytes[at + index]!;
    value = value * 256 + byte;
    allOnes &&= byte === 0xff;
  }
  // All value bits set: "unknown size" (a live recording's Segment and Clusters).
  return { value: !keepMarker && allOnes ? -1 : value, length };
}

function unsigned(bytes: Uint8Array, start: number, end: number): number {
  let value = 0;
  for (let index = start; index < end; index++) value = value * 256 + bytes[index]!;
  return value;
}

type Track = { number: number; codec: string; head: Uint8Array | null };

/** The tracks and every block's (track, payload), in file order. */
function demux(bytes: Uint8Array): {
  tracks: Track[];
  blocks: Array<{ track: number; payload: Uint8Array }>;
} {
  const tracks: Track[] = [];
  const blocks: Array<{ track: number; payload: Uint8Array }> = [];
  const text = (start: number, end: number) => String.fromCharCode(...bytes.subarray(start, end));
  let at = 0;
  while (at < bytes.length) {
    const id = readVint(bytes, at, true);
    const size = readVint(bytes, at + id.length, false);
    const start = at + id.length + size.length;
    // A recording cut off mid-element keeps what arrived whole.
    const end = size.value < 0 ? bytes.length : Math.min(start + size.value, bytes.length);
    if (CONTAINERS.has(id.value)) {
      if (id.value === TRACK_ENTRY) tracks.push({ number: 0, codec: '', head: null });
      at = start;
      continue;
    }
    const track = tracks.at(-1);
    if (id.value === TRACK_NUMBER && track) track.number = unsigned(bytes, start, end);
    else if (id.value === CODEC_ID && track) track.codec = text(start, end).replace(/\0+$/, '');
    else if (id.value === CODEC_PRIVATE && track) track.head = bytes.subarray(start, end);
    else if ((id.value === SIMPLE_BLOCK || id.value === BLOCK) && end === start + size.value) {
      const number = readVint(bytes, start, false);
      const flags = bytes[start + number.length + 2] ?? 0;
      // Opus is written one packet per block; laced blocks (several per block) are not.
      if (flags & 0x06)
        throw new StewardError('unsupported_audio', 'WebM blocks with lacing are not supported');
      blocks.push({ track: number.value, payload: bytes.subarray(start + number.length + 3, end) });
    }
    at = end;
  }
  return { tracks, blocks };
}

/** Samples (at 48 kHz) in one Opus packet, from its TOC byte (RFC 6716 §3.1). */
function packetSamples(packet: Uint8Array): number {
  const toc = packet[0] ?? 0;
  const config = toc >> 3;
  const frameSamples =
    config < 12
      ? [480, 960, 1920, 2880][config % 4]!
      : config < 16
        ? [480, 960][config % 2]!
        : [120, 240, 480, 960][config % 4]!;
  const code = toc & 3;
  const frames = code === 0 ? 1 : code < 3 ? 2 : (packet[1] ?? 0) & 0x3f;
  return frameSamples * frames;
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let index = 0; index < 256; index++) {
    let crc = index << 24;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x80000000 ? (crc << 1) ^ 0x04c11db7 : crc << 1;
    table[index] = crc >>> 0;
  }
  return table;
})();

/** Ogg's CRC-32 (polynomial 0x04c11db7, not reflected, no final xor) over a page whose CRC field is 0. */
export function oggCrc(page: Uint8Array): number {
  let crc = 0;
  for (const byte of page) crc = ((crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ byte) & 0xff]!) >>> 0;
  return crc;
}

const SERIAL = 0x53747764; // "Stwd"

/** One Ogg page holding whole `packets`. */
function oggPage(packets: Uint8Array[], granule: bigint, sequence: number, flags: number): Uint8Array {
  const lacing: number[] = [];
  for (const packet of packets) {
    for (let left = packet.length; ; left -= 255) {
      lacing.push(Math.min(left, 255));
      if (left < 255) break;
    }
  }
  const bodyLength = packets.reduce((sum, packet) => sum + packet.length, 0);
  const page = new Uint8Array(27 + lacing.length + bodyLength);
  const view = new DataView(page.buffer);
  page.set([0x4f, 0x67, 0x67, 0x53], 0); // OggS
  page[5] = flags;
  view.setBigInt64(6, granule, true);
  view.setUint32(14, SERIAL, true);
  view.setUint32(18, sequence, true);
  page[26] = lacing.length;
  page.set(lacing, 27);
  let at = 27 + lacing.length;
  for (const packet of packets) {
    page.set(packet, at);
    at += packet.length;
  }
  view.setUint32(22, oggCrc(page), true);
  return page;
}

/** Lacing values one Ogg page holds at most. */
const MAX_PAGE_SEGMENTS = 255;

/**
 * The Opus audio of a WebM file as an Ogg/Opus file. Throws StewardError `corrupt_audio`
 * (unreadable WebM) or `unsupported_audio` (no Opus track), with a message saying which.
 */
export function webmOpusToOgg(bytes: Uint8Array): Uint8Array {
  const { tracks, blocks } = demux(bytes);
  const opus = tracks.find((track) => track.codec === 'A_OPUS');
  if (!opus) {
    const codecs = tracks.map((track) => track.codec).filter(Boolean);
    if (codecs.length === 0) throw corrupt('it has no audio track');
    throw new StewardError('unsupported_audio', `WebM with ${codecs.join(', ')} audio; only Opus is read`);
  }
  if (!opus.head || String.fromCharCode(...opus.head.subarray(0, 8)) !== 'OpusHead')
    throw corrupt('its Opus track has no OpusHead');
  const packets = blocks.filter((block) => block.track === opus.number && block.payload.length > 0);
  if (packets.length === 0) throw corrupt('it holds no audio');
  const vendor = new TextEncoder().encode('Steward (from WebM)');
  const tags = new Uint8Array(8 + 4 + vendor.length + 4);
  tags.set(new TextEncoder().encode('OpusTags'), 0);
  new DataView(tags.buffer).setUint32(8, vendor.length, true);
  tags.set(vendor, 12);
  const pages = [oggPage([opus.head], 0n, 0, 0x02), oggPage([tags], 0n, 1, 0)];
  let granule = 0n;
  let page: Uint8Array[] = [];
  let segments = 0;
  const flush = (last: boolean) => {
    pages.push(oggPage(page, granule, pages.length, last ? 0x04 : 0));
    page = [];
    segments = 0;
  };
  for (const { payload } of packets) {
    const needed = Math.floor(payload.length / 255) + 1;
    if (segments + needed > MAX_PAGE_SEGMENTS) flush(false);
    granule += BigInt(packetSamples(payload));
    page.push(payload);
    segments += needed;
  }
  flush(true);
  const out = new Uint8Array(pages.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of pages) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
