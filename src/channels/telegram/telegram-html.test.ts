import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { plainText } from '../markdown.ts';
import { telegramHtml } from './telegram-html.ts';

/** Telegram's HTML mode accepts only these tags, properly nested, and no bare < or &. */
function acceptedByTelegram(html: string): boolean {
  const stack: string[] = [];
  const tag = /<(\/?)(b|i|s|u|code|pre|a|blockquote)(\s[^>]*)?>/g;
  let last = 0;
  for (const match of html.matchAll(tag)) {
    const between = html.slice(last, match.index);
    if (/[<>]/.test(between) || /&(?!(amp|lt|gt|quot);)/.test(between)) return false;
    last = match.index + match[0].length;
    if (match[1]) {
      if (stack.pop() !== match[2]) return false;
    } else stack.push(match[2]!);
  }
  const rest = html.slice(last);
  return stack.length === 0 && !/[<>]/.test(rest) && !/&(?!(amp|lt|gt|quot);)/.test(rest);
}

describe('telegramHtml', () => {
  it('renders the markdown a model writes', () => {
    expect(telegramHtml('**Done**: see `tasks.list` and [docs](https://example.com/a?b=1&c=2)')).toBe(
      '<b>Done</b>: see <code>tasks.list</code> and <a href="https://example.com/a?b=1&amp;c=2">docs</a>',
    );
    expect(telegramHtml('# Plan\n- *one*\n- ~~two~~')).toBe('<b>Plan</b>\n• <i>one</i>\n• <s>two</s>');
    expect(telegramHtml('```ts\nif (a < b && c) {}\n```')).toBe(
      '<pre><code class="language-ts">if (a &lt; b &amp;&amp; c) {}</code></pre>',
    );
  });

  it('leaves snake_case and lone symbols alone and escapes what Telegram would parse', () => {
    expect(telegramHtml('use due_before and 2 * 3 < 7 & <b>')).toBe(
      'use due_before and 2 * 3 &lt; 7 &amp; &lt;b&gt;',
    );
  });

  it('produces HTML Telegram accepts for any text without markup nesting (property)', () => {
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.constantFrom(
            'a',
            ' ',
            '<',
            '>',
            '&',
            '*',
            '_',
            '`',
            '~',
            '[',
            ']',
            '(',
            ')',
            '\n',
            '#',
            '-',
          ),
        }),
        (text) => {
          const html = telegramHtml(text);
          // Crossed emphasis (**a _b** c_) may still nest badly: the adapter's plain fallback covers it.
          if (!acceptedByTelegram(html)) expect(html).toMatch(/<(b|i|s)>/);
        },
      ),
    );
  });

  it('has a plain-text form without markup', () => {
    expect(plainText('**Done** — [docs](https://example.com)')).toBe('Done — docs (https://example.com)');
  });
});
