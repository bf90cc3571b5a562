/**
 * Lines that open the quoted history mail clients put under a reply: Gmail's and Apple Mail's
 * attribution ("On Mon, 3 Nov 2026 at 10:00, Ana <ana@example.com> wrote:", in a few
 * languages), Outlook's "-----Original Message-----" and its underscore rule.
 */
const ATTRIBUTION = [
  /^On\b[\s\S]{0,300}\bwrote:\s*$/,
  /^Le\b[\s\S]{0,300}\ba écrit\s?:\s*$/,
  /^Am\b[\s\S]{0,300}\bschrieb[\s\S]{0,120}:\s*$/,
  /^El\b[\s\S]{0,300}\bescribió:\s*$/,
  /^Il giorno\b[\s\S]{0,300}\bha scritto:\s*$/,
  /^Op\b[\s\S]{0,300}\bschreef[\s\S]{0,120}:\s*$/,
];
const OUTLOOK_HEADER =
  /^(-{2,}\s*(Original Message|Forwarded message|Ursprüngliche Nachricht|Message d'origine)\s*-{2,}|_{20,})\s*$/i;
/** Outlook's plain header block: `From:` then `Sent:`/`Date:` on the next lines. */
const FROM_LINE = /^\*?(From|Von|De):\*?\s/i;
const SENT_LINE = /^\*?(Sent|Date|Gesendet|Envoyé|Datum):\*?\s/i;

/**
 * The new text of a reply: everything above the quoted history (an attribution line, an
 * Outlook header block), without trailing `>` quoted lines and without the signature after a
 * `-- ` line. Quoted lines interleaved with new text (an inline reply) are kept as they are.
 */
export function stripQuotedReply(text: string): string {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  let end = lines.length;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!.trim();
    // An attribution may be wrapped over two lines.
    const joined = `${line} ${(lines[index + 1] ?? '').trim()}`.trim();
    if (
      ATTRIBUTION.some((pattern) => pattern.test(line)) ||
      (line.length > 0 &&
        !line.startsWith('>') &&
        ATTRIBUTION.some((pattern) => pattern.test(joined)) &&
        /^\s*>/.test(lines[index + 2] ?? '')) ||
      OUTLOOK_HEADER.test(line) ||
      (FROM_LINE.test(line) && SENT_LINE.test((lines[index + 1] ?? '').trim()))
    ) {
      end = index;
      break;
    }
    if (lines[index] === '-- ' || lines[index] === '--') {
      end = index;
      break;
    }
  }
  const kept = lines.slice(0, end);
  while (kept.length > 0 && (kept.at(-1)!.trim() === '' || kept.at(-1)!.trimStart().startsWith('>')))
    kept.pop();
  return kept.join('\n').trim();
}
