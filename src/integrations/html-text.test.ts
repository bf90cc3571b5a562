import { describe, expect, it } from 'vitest';
import { htmlToReadableText } from './html-text.ts';

describe('htmlToReadableText', () => {
  it('keeps the words and lines of a newsletter-like HTML mail, not its markup', () => {
    const html = `<html><head><style>p { color: red }</style><script>alert(1)</script></head>
      <body><h1>Quarterly update</h1><p>Revenue is up&nbsp;12&nbsp;% &amp; churn &lt; 2 %.</p>
      <ul><li>Alpha shipped</li><li>Beta next</li></ul>
      <p>Read <a href="https://example.com/report">the report</a>.<br>Thanks,<br>Ana</p>
      <img src="https://tracker.example/pixel.gif"></body></html>`;
    const text = htmlToReadableText(html);
    expect(text).toContain('QUARTERLY UPDATE');
    expect(text).toContain('Revenue is up 12 % & churn < 2 %.');
    expect(text).toMatch(/\* Alpha shipped\n \* Beta next/);
    expect(text).toContain('the report [https://example.com/report]');
    expect(text).toContain('Thanks,\nAna');
    expect(text).not.toMatch(/alert|color: red|pixel\.gif|<\/?[a-z]/);
  });

  it('gives plain text back unchanged', () => {
    expect(htmlToReadableText('Call me at 5')).toBe('Call me at 5');
  });
});
