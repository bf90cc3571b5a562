import { markdownHtml } from '../markdown-html.ts';

/**
 * Markdown as Matrix HTML (`format: org.matrix.custom.html`): only tags the spec lists for
 * `formatted_body` (strong, em, del, code, pre, a, blockquote, br), text escaped.
 */
export function matrixHtml(markdown: string): string {
  return markdownHtml(markdown);
}
