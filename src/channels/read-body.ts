/** Webhook bodies above this are refused (413), whatever their credentials. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * Reads a request body up to `limit` bytes. Past the limit it stops reading, cancels the
 * stream and returns `tooLarge`, so an oversized body is never buffered whole.
 */
export async function readBodyWithin(
  request: Request,
  limit: number,
): Promise<{ body: Uint8Array } | { tooLarge: true }> {
  if (!request.body) return { body: new Uint8Array(0) };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return { tooLarge: true };
    }
    chunks.push(value);
  }
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { body };
}
