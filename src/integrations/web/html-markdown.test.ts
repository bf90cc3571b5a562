import { describe, expect, it } from 'vitest';
import { htmlToMarkdown } from './html-markdown.ts';

const paragraph = (words: string) =>
  `<p>${words} ${'The timetable changes on the first Monday of each month. '.repeat(4)}</p>`;

describe('htmlToMarkdown', () => {
  it('keeps the article, its headings, lists, emphasis and absolute links, and drops the page around it', () => {
    const page = htmlToMarkdown(
      `<!doctype html><html><head><title>Trains | Rail Co</title><base href="/en/"></head><body>
       <nav><a href="/">Home</a> NAV-ONLY</nav>
       <article><h1>Trains to Girona</h1><p class="byline">By Joan Puig</p>
       ${paragraph('First <em>slow</em> train at 07:15.')}
       <h2>Tickets</h2><ol><li>Buy online</li><li>Or at the <a href="station.html">station</a></li></ol>
       ${paragraph('<a href="mailto:info@rail.example">Write to us</a>.')}
       <img src="map.png" alt="Map of the line"><img src="spacer.gif">
       </article><aside>ASIDE-ONLY</aside><footer>FOOTER-ONLY</footer></body></html>`,
      'https://rail.example/en/trains?from=bcn',
    );
    expect(page.article).toBe(true);
    expect(page.title).toBe('Trains | Rail Co');
    expect(page.byline).toBe('By Joan Puig');
    expect(page.markdown).toContain('## Tickets');
    expect(page.markdown).toContain('_slow_');
    expect(page.markdown).toMatch(/^1\. +Buy online$/m);
    expect(page.markdown).toContain('[station](https://rail.example/en/station.html)');
    expect(page.markdown).toContain('[Write to us](mailto:info@rail.example)');
    expect(page.markdown).toContain('![Map of the line](https://rail.example/en/map.png)');
    expect(page.markdown).not.toContain('spacer.gif');
    for (const marker of ['NAV-ONLY', 'ASIDE-ONLY', 'FOOTER-ONLY'])
      expect(page.markdown).not.toContain(marker);
  });

  it('reads a page that leaves out <html>, <head> and <body>, as HTML allows', () => {
    const page = htmlToMarkdown(
      `<title>Notice</title>${paragraph('Station closed on Sunday.')}${paragraph('Buses replace trains.')}`,
      'https://rail.example/notice',
    );
    expect(page.title).toBe('Notice');
    expect(page.markdown).toContain('Station closed on Sunday.');
    expect(page.markdown).toContain('Buses replace trains.');
  });

  it('converts the whole body when there is no article to find, without scripts, styles or forms', () => {
    const page = htmlToMarkdown(
      `<html><head><title>Departures</title><style>td{color:red}</style></head><body>
       <table><tr><th>Time</th><th>To</th></tr><tr><td>07:15</td><td>Girona</td></tr></table>
       <form><input name="q"><button>Search</button></form>
       <script>var SCRIPT_ONLY = 1;</script><a href="javascript:void(0)">Refresh</a></body></html>`,
      'https://rail.example/departures',
    );
    expect(page.article).toBe(false);
    expect(page.markdown).toContain('07:15');
    expect(page.markdown).toContain('Girona');
    expect(page.markdown).toContain('Refresh');
    expect(page.markdown).not.toContain('javascript:');
    expect(page.markdown).not.toContain('SCRIPT_ONLY');
    expect(page.markdown).not.toContain('color:red');
    expect(page.markdown).not.toContain('Search');
  });
});
