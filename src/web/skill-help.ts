import { html, raw } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import { markdownToHtml } from './markdown.ts';

/** One documented flag: `--due   Due date (required)` → name, meaning, and whether it is required. */
export type FlagRow = { flag: string; meaning: string; required: boolean };

const FLAG_LINE = /^\s*(--[a-z][\w-]*)(?:\s+(<[^>]+>|[A-Z_]+))?(?:\s{2,}|\s*$)(.*)$/;
/** Sections whose lines are commands, shown as written. */
const COMMAND_SECTIONS = new Set(['usage', 'examples']);

/**
 * A `## Flags` section's lines as rows: each starts with `--flag`, and an indented line that
 * follows continues the meaning above it. Null when any other line breaks the pattern (the
 * section is then shown as written, never half as a table).
 */
export function flagRows(section: string): FlagRow[] | null {
  const rows: FlagRow[] = [];
  for (const line of section.split('\n')) {
    if (!line.trim()) continue;
    const match = FLAG_LINE.exec(line);
    if (match) {
      const meaning = [match[2], match[3]].filter(Boolean).join(' ').trim();
      rows.push({ flag: match[1]!, meaning, required: /\(required\)/i.test(meaning) });
    } else if (/^\s+\S/.test(line) && rows.length > 0) {
      const last = rows.at(-1)!;
      last.meaning = `${last.meaning} ${line.trim()}`.trim();
      last.required ||= /\(required\)/i.test(line);
    } else return null;
  }
  return rows.length ? rows : null;
}

/**
 * A skill page's body for the Skills page: markdown, but `## Flags` as a table of flag, meaning
 * and required, and `## Usage` / `## Examples` as commands in a code block (kept on their lines).
 */
export function skillHelp(body: string): HtmlEscapedString | Promise<HtmlEscapedString> {
  const parts: Array<HtmlEscapedString | Promise<HtmlEscapedString>> = [];
  // Split before each `## ` heading; the text before the first one is its own part.
  for (const section of body.replace(/\r\n?/g, '\n').split(/\n(?=## )/)) {
    const heading = /^## (.+)\n?/.exec(section);
    const title = heading?.[1]?.trim() ?? '';
    const content = heading ? section.slice(heading[0].length) : section;
    const key = title.toLowerCase();
    const rows = key === 'flags' ? flagRows(content) : null;
    if (rows) {
      parts.push(html`<h4>Flags</h4><table class="flags"><thead><tr><th scope="col">Flag</th><th scope="col">Meaning</th><th scope="col">Required</th></tr></thead>
        <tbody>${rows.map((row) => html`<tr><td><code>${row.flag}</code></td><td>${inlineCode(row.meaning.replace(/\s*\(required\)/i, ''))}</td><td>${row.required ? 'yes' : ''}</td></tr>`)}</tbody></table>`);
    } else if (COMMAND_SECTIONS.has(key) && content.trim() && !content.includes('```')) {
      parts.push(
        html`<h4>${title}</h4><pre class="commands"><code>${commandText(content.trim())}</code></pre>`,
      );
    } else {
      parts.push(raw(markdownToHtml(section)));
    }
  }
  return html`${parts}`;
}

/** Text with `code` spans marked up (everything else stays text). */
function inlineCode(text: string) {
  return text.split('`').map((part, index) => (index % 2 ? html`<code>${part}</code>` : part));
}

/**
 * Command text that wraps only between words, never inside a flag such as `--priority` (a
 * browser breaks after hyphens). A word too long for a phone's line may still wrap anywhere.
 */
export function commandText(text: string) {
  return text
    .split('\n')
    .map(
      (line, index) =>
        html`${index ? '\n' : ''}${line
          .split(/(\s+)/)
          .map((part) =>
            /^\s*$/.test(part) || part.length > 32 ? part : html`<span class="token">${part}</span>`,
          )}`,
    );
}

/** A dotted skill name that wraps only between its parts (after `.` and `_`), never inside a word. */
export function skillName(name: string) {
  const pieces = name.split(/(?<=[._])/);
  return html`<code class="skill-name">${pieces.map((piece, index) => (index ? html`<wbr>${piece}` : piece))}</code>`;
}
