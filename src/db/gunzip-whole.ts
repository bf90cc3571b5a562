import { gunzipSync } from 'node:zlib';

/**
 * A gzip member inflated into one buffer sized from its trailer (the length mod 2^32). zlib's
 * default 16 KB output chunks are small enough for the C allocator's heap, which keeps what they
 * leave behind for the life of the process (unpacking the database template this way held ~16 MB
 * for good); one buffer that large is mapped on its own and given back when it is collected.
 */
export function gunzipWhole(compressed: Buffer): Buffer {
  const size = compressed.length >= 4 ? compressed.readUInt32LE(compressed.length - 4) : 0;
  return gunzipSync(compressed, { chunkSize: Math.max(64 * 1024, size + 1) });
}
