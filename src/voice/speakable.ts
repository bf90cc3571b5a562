/**
 * Markdown as words to be spoken: no code, link targets, emphasis marks, headings, bullets or
 * table rules. Steward's voice prompt asks for plain speech; this catches what slips through.
 */
export function speakableText(markdown: string): string {
  return markdown
    .replace(/```[\s\S]*?```/g, ' ')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/https?:\/\/\S+/g, 'a link')
    .replace(/^[ \t]*\|?[ \t]*:?-{3,}[^\n]*\n?/gm, '')
    .replace(/[ \t]*\|[ \t]*/g, ', ')
    .replace(/^\s{0,3}#{1,6}\s+/gm, '')
    .replace(/^\s*(?:[-*+•]|\d+[.)])\s+/gm, '')
    .replace(/(\*\*|__|~~)(.+?)\1/g, '$2')
    .replace(/(^|\W)[*_](\S(?:.*?\S)?)[*_](?=\W|$)/g, '$1$2')
    .replace(/^[, \t]+|[, \t]+$/gm, '')
    .replace(/\n{2,}/g, '\n\n')
    .trim();
}

/** Sentences of `text` from the start, up to about `maxChars`. */
function leadingSentences(text: string, maxChars: number): string {
  const sentences = text.replace(/\s+/g, ' ').match(/[^.!?]+[.!?]+(?:\s|$)|[^.!?]+$/g) ?? [text];
  let out = '';
  for (const sentence of sentences) {
    if (out && out.length + sentence.length > maxChars) break;
    out += sentence;
  }
  return out.trim().slice(0, maxChars);
}

export const FULL_TEXT_FOLLOWS = 'The full answer is in the text I sent with this.';

/**
 * What to speak for a reply: all of it when it is short; for a reply longer than `longChars`,
 * its opening sentences and a pointer to the full text, which is sent as well.
 */
export function spokenReply(reply: string, longChars: number): { spoken: string; long: boolean } {
  const plain = speakableText(reply);
  if (reply.trim().length <= longChars) return { spoken: plain || reply.trim(), long: false };
  const firstParagraph = plain.split(/\n\n/)[0] ?? plain;
  return {
    spoken: `${leadingSentences(firstParagraph, Math.floor(longChars * 0.6))} ${FULL_TEXT_FOLLOWS}`,
    long: true,
  };
}
