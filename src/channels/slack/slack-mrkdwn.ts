import { type MarkdownRenderer, quoteLines, renderMarkdown } from '../markdown.ts';

const escapeSlack = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

const SLACK_MRKDWN: MarkdownRenderer = {
  escape: escapeSlack,
  codeBlock: (code) => `\`\`\`\n${escapeSlack(code)}\n\`\`\``,
  inlineCode: (code) => `\`${escapeSlack(code)}\``,
  bold: (inner) => `*${inner}*`,
  italic: (inner) => `_${inner}_`,
  strike: (inner) => `~${inner}~`,
  link: (label, url) =>
    `<${url.replaceAll('|', '%7C').replaceAll('>', '%3E')}|${escapeSlack(label).replaceAll('|', '¦')}>`,
  heading: (inner) => `*${inner}*`,
  bullet: '•',
  quote: quoteLines('>'),
};

/** Markdown to Slack mrkdwn (`*bold*`, `_italic_`, `<url|label>`), with `& < >` escaped as Slack asks. */
export function slackMrkdwn(markdown: string): string {
  return renderMarkdown(markdown, SLACK_MRKDWN);
}
