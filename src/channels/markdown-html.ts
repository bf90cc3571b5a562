import { type MarkdownRenderer, renderMarkdown } from './markdown.ts';

export const escapeHtml = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');

const HTML: MarkdownRenderer = {
  escape: escapeHtml,
  codeBlock: (code, language) =>
    `<pre><code${language ? ` class="language-${escapeHtml(language)}"` : ''}>${escapeHtml(code)}</code></pre>`,
  inlineCode: (code) => `<code>${escapeHtml(code)}</code>`,
  bold: (inner) => `<strong>${inner}</strong>`,
  italic: (inner) => `<em>${inner}</em>`,
  strike: (inner) => `<del>${inner}</del>`,
  link: (label, url) => `<a href="${escapeHtml(url)}">${escapeHtml(label)}</a>`,
  heading: (inner) => `<strong>${inner}</strong>`,
  bullet: '•',
  quote: (inner) => `<blockquote>${inner}</blockquote>`,
};

/**
 * Markdown as a small, safe subset of HTML (strong, em, del, code, pre, a, blockquote), text
 * escaped. Line breaks become `<br />` — HTML would fold them — except inside `<pre>`.
 */
export function markdownHtml(markdown: string): string {
  const html = renderMarkdown(markdown, HTML);
  return html
    .split(/(<pre>[\s\S]*?<\/pre>)/)
    .map((part) => (part.startsWith('<pre>') ? part : part.replaceAll('\n', '<br />')))
    .join('');
}
