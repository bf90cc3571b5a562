import { describe, expect, it } from 'vitest';
import { matrixHtml } from './matrix-html.ts';

describe('matrixHtml', () => {
  it('renders the markdown a model writes as the HTML Matrix clients show', () => {
    expect(matrixHtml('**Done**: see `tasks.list` and [docs](https://example.com/a?b=1&c=2)')).toBe(
      '<strong>Done</strong>: see <code>tasks.list</code> and <a href="https://example.com/a?b=1&amp;c=2">docs</a>',
    );
    expect(matrixHtml('# Plan\n\n- *one*\n- ~~two~~\n\n> quoted\n\n1. first')).toBe(
      '<strong>Plan</strong><br /><br />• <em>one</em><br />• <del>two</del><br /><br /><blockquote>quoted</blockquote><br /><br />1. first',
    );
  });

  it('escapes text and keeps the line breaks of code blocks', () => {
    expect(matrixHtml('a < b & "c"\n```ts\nif (a < b) {\n  go();\n}\n```\ndone')).toBe(
      'a &lt; b &amp; &quot;c&quot;<br /><pre><code class="language-ts">if (a &lt; b) {\n  go();\n}</code></pre><br />done',
    );
    expect(matrixHtml('<script>alert(1)</script>')).toBe('&lt;script&gt;alert(1)&lt;/script&gt;');
  });
});
