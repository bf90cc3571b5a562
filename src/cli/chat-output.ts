/**
 * What to print after a reply streamed to the terminal as `segment`: nothing new when the reply
 * is what streamed, only its end when it grew (the receipt lines Steward adds), else all of it
 * on a line of its own. Always ends with a newline.
 */
export function afterStream(segment: string, reply: string): string {
  const streamed = segment.trim();
  if (streamed && reply.trim() === streamed) return '\n';
  if (streamed && reply.startsWith(streamed)) return `${reply.slice(streamed.length).trimEnd()}\n`;
  return `${segment ? '\n' : ''}${reply}\n`;
}
