import { type MarkdownRenderer, quoteLines, renderMarkdown } from '../markdown.ts';

/** signal-cli-rest-api's `styled` mode reads `*`, `` ` ``, `~` and `||` as style marks; a backslash keeps one literal. */
const escapeSignal = (text: string) => text.replace(/[*`~|]/g, '\\$&');

const SIGNAL_STYLED: MarkdownRenderer = {
  escape: escapeSignal,
  // Code is monospace; the style marks inside it are escaped too (the API reads them anywhere).
  codeBlock: (code) => `\`${escapeSignal(code)}\``,
  inlineCode: (code) => `\`${escapeSignal(code)}\``,
  bold: (inner) => `**${inner}**`,
  italic: (inner) => `*${inner}*`,
  strike: (inner) => `~${inner}~`,
  link: (label, url) => (label === url ? escapeSignal(url) : `${label} (${escapeSignal(url)})`),
  heading: (inner) => `**${inner}**`,
  bullet: '•',
  quote: quoteLines('> '),
};

/**
 * Markdown as Signal text styles (sent with `text_mode: styled`): bold, italic, strikethrough
 * and monospace; links written out after their label; literal style characters escaped.
 */
export function signalStyledText(markdown: string): string {
  return renderMarkdown(markdown, SIGNAL_STYLED);
}
