import { type MarkdownRenderer, renderMarkdown } from '../markdown.ts';

const escapeHtml = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
const escapeAttribute = (text: string) => escapeHtml(text).replaceAll('"', '&quot;');

const TELEGRAM_HTML: MarkdownRenderer = {
  escape: escapeHtml,
  codeBlock: (code, language) =>
    language
      ? `<pre><code class="language-${escapeAttribute(language)}">${escapeHtml(code)}</code></pre>`
      : `<pre>${escapeHtml(code)}</pre>`,
  inlineCode: (code) => `<code>${escapeHtml(code)}</code>`,
  bold: (inner) => `<b>${inner}</b>`,
  italic: (inner) => `<i>${inner}</i>`,
  strike: (inner) => `<s>${inner}</s>`,
  link: (label, url) => `<a href="${escapeAttribute(url)}">${escapeHtml(label)}</a>`,
  heading: (inner) => `<b>${inner}</b>`,
  bullet: '•',
  quote: (inner) => `<blockquote>${inner}</blockquote>`,
};

/**
 * Markdown to Telegram's HTML parse mode: only `&`, `<` and `>` need escaping there, which
 * makes it far harder to get rejected than MarkdownV2. Should Telegram still refuse the
 * entities (400 "can't parse entities"), the adapter resends the message as plain text.
 */
export function telegramHtml(markdown: string): string {
  return renderMarkdown(markdown, TELEGRAM_HTML);
}
