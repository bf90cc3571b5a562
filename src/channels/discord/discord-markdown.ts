import { type MarkdownRenderer, quoteLines, renderMarkdown } from '../markdown.ts';

/**
 * Text as Discord shows it written: a backslash before each character its markdown would read
 * (Discord hides a backslash before any punctuation), and before `>`, `#` or `-` opening a line.
 */
const escapeDiscord = (text: string) =>
  text.replace(/[\\*_~`|<[\]]/g, '\\$&').replace(/(^|\n)([>#-])/g, '$1\\$2');

const DISCORD_MARKDOWN: MarkdownRenderer = {
  escape: escapeDiscord,
  // A fence inside the code would end the block early; a zero-width space between its backticks keeps it.
  codeBlock: (code, language) => `\`\`\`${language}\n${code.replaceAll('```', '`\u200b``')}\n\`\`\``,
  inlineCode: (code) => (code.includes('`') ? `\`\` ${code} \`\`` : `\`${code}\``),
  bold: (inner) => `**${inner}**`,
  italic: (inner) => `*${inner}*`,
  strike: (inner) => `~~${inner}~~`,
  link: (label, url) => (label === url ? url : `[${escapeDiscord(label)}](${url.replaceAll(')', '%29')})`),
  heading: (inner) => `**${inner}**`,
  bullet: '-',
  quote: quoteLines('> '),
};

/**
 * Markdown as Discord shows it: `**bold**`, `*italic*`, `~~strike~~`, code, masked links,
 * quotes; text escaped so that only the model's markup is read as markup (`__x__`, which Discord
 * would underline, is bold; headings are bold lines).
 */
export function discordMarkdown(markdown: string): string {
  return renderMarkdown(markdown, DISCORD_MARKDOWN);
}
