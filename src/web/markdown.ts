import { raw } from 'hono/html';

/*
 * A small markdown renderer for model and user text. Everything is escaped first, so raw HTML
 * in the text shows as text — never removed silently, never executed — and only the markup made
 * here (paragraphs, headings, lists, code, emphasis, http(s) links) is real HTML.
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

/** Inline markup on already-escaped text. */
function inline(escaped: string): string {
  const codes: string[] = [];
  let out = escaped.replace(/`([^`\n]+)`/g, (_, code: string) => {
    codes.push(`<code>${code}</code>`);
    return `\uE000${codes.length - 1}\uE001`;
  });
  // A backslash before markdown punctuation shows that character as written (receipt lines).
  out = out.replace(/\\([\\*_~[\]])/g, (_, char: string) => {
    codes.push(char);
    return `\uE000${codes.length - 1}\uE001`;
  });
  out = out
    .replace(
      /\[([^\]\n]+)\]\((https?:\/\/[^\s()]+)\)/g,
      (_, label: string, url: string) => `<a href="${url}" rel="noopener noreferrer">${label}</a>`,
    )
    .replace(/\*\*([^*\n]+)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[^*\w])\*([^*\n]+)\*(?!\w)/g, '$1<em>$2</em>')
    .replace(/(^|[^_\w])_([^_\n]+)_(?!\w)/g, '$1<em>$2</em>');
  return out.replace(/\uE000(\d+)\uE001/g, (match, index: string) => codes[Number(index)] ?? match);
}

/** Markdown to HTML (as a string); raw HTML in `text` is shown as text. */
export function markdownToHtml(text: string): string {
  const lines = escapeHtml(text.replace(/\r\n?/g, '\n')).split('\n');
  const out: string[] = [];
  let paragraph: string[] = [];
  let list: { tag: 'ul' | 'ol'; items: string[] } | null = null;
  const flushParagraph = () => {
    if (paragraph.length) out.push(`<p>${paragraph.map(inline).join('<br>')}</p>`);
    paragraph = [];
  };
  const flushList = () => {
    if (list)
      out.push(`<${list.tag}>${list.items.map((item) => `<li>${inline(item)}</li>`).join('')}</${list.tag}>`);
    list = null;
  };
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    const fence = /^\s*```/.exec(line);
    if (fence) {
      flushParagraph();
      flushList();
      const code: string[] = [];
      index++;
      while (index < lines.length && !/^\s*```/.test(lines[index]!)) code.push(lines[index++]!);
      out.push(`<pre><code>${code.join('\n')}</code></pre>`);
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      flushParagraph();
      flushList();
      const level = Math.min(6, heading[1]!.length + 2);
      out.push(`<h${level}>${inline(heading[2]!)}</h${level}>`);
      continue;
    }
    const bullet = /^\s*[-*+]\s+(.*)$/.exec(line);
    const numbered = /^\s*\d+[.)]\s+(.*)$/.exec(line);
    if (bullet || numbered) {
      flushParagraph();
      const tag = bullet ? 'ul' : 'ol';
      if (list && list.tag !== tag) flushList();
      list ??= { tag, items: [] };
      list.items.push((bullet ?? numbered)![1]!);
      continue;
    }
    if (!line.trim()) {
      flushParagraph();
      flushList();
      continue;
    }
    flushList();
    paragraph.push(line);
  }
  flushParagraph();
  flushList();
  return out.join('\n');
}

/** For templates: the rendered markdown as trusted HTML (it was escaped above). */
export const markdown = (text: string) => raw(markdownToHtml(text));
