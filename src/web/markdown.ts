import { raw } from 'hono/html';
import { Marked } from 'marked';

/*
 * Markdown for model and user text on the dashboard. Raw HTML in the text shows as text —
 * never removed silently, never executed — and only the markup marked makes from markdown
 * (paragraphs, headings, lists, code, emphasis, quotes, tables, safe links) is real HTML.
 */

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char]!);
}

const SAFE_LINK = /^(https?:\/\/|mailto:)/i;

/**
 * marked, with everything that could put HTML of the text's own on the page turned into text:
 * raw HTML is escaped, links are kept only to http(s) and mailto addresses (opening a new,
 * unconnected page), images are shown as links. Headings start at h3 (the page has h1 and h2).
 */
const parser = new Marked({
  gfm: true,
  breaks: true,
  renderer: {
    html: ({ text }) => escapeHtml(text),
    heading({ tokens, depth }) {
      const level = Math.min(6, depth + 2);
      return `<h${level}>${this.parser.parseInline(tokens)}</h${level}>\n`;
    },
    link({ href, tokens }) {
      const label = this.parser.parseInline(tokens);
      return SAFE_LINK.test(href)
        ? `<a href="${escapeHtml(href)}" rel="noopener noreferrer">${label}</a>`
        : label;
    },
    image: ({ href, text }) =>
      SAFE_LINK.test(href)
        ? `<a href="${escapeHtml(href)}" rel="noopener noreferrer">${escapeHtml(text || href)}</a>`
        : escapeHtml(text),
  },
});

/** Markdown to HTML (as a string); raw HTML in `text` is shown as text. */
export function markdownToHtml(text: string): string {
  return (parser.parse(text.replace(/\r\n?/g, '\n'), { async: false }) as string).trimEnd();
}

/** For templates: the rendered markdown as trusted HTML (it was escaped above). */
export const markdown = (text: string) => raw(markdownToHtml(text));
