import { type MarkdownRenderer, renderMarkdown } from '../markdown.ts';

/** Characters Discord's markdown reads; a backslash before one shows it as written. */
const DISCORD_PUNCTUATION = /^[\\*_~`|<>#[\]()-]$/;

const DISCORD_MARKDOWN: MarkdownRenderer = {
  // Discord reads markdown itself, so text passes as written. A lone punctuation character
  // reaches `escape` only from a backslash escape (or as a whole line): it must show as written.
  escape: (text) => (DISCORD_PUNCTUATION.test(text) ? `\\${text}` : text),
  // A fence inside the code would end the block early; a zero-width space between its backticks keeps it.
  codeBlock: (code, language) => `\`\`\`${language}\n${code.replaceAll('```', '`\u200b``')}\n\`\`\``,
  inlineCode: (code) => (code.includes('`') ? `\`\` ${code} \`\`` : `\`${code}\``),
  bold: (inner) => `**${inner}**`,
  italic: (inner) => `*${inner}*`,
  strike: (inner) => `~~${inner}~~`,
  link: (label, url) => (label === url ? url : `[${label.replaceAll(']', '\\]')}](${url})`),
  heading: (inner) => `**${inner}**`,
  bullet: '-',
};

/**
 * Markdown as Discord shows it: `**bold**`, `*italic*`, `~~strike~~`, code, masked links. What
 * Discord reads differently is rewritten — `__x__` (underline there) becomes bold, headings bold.
 */
export function discordMarkdown(markdown: string): string {
  return renderMarkdown(markdown, DISCORD_MARKDOWN);
}
