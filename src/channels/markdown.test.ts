import { describe, expect, it } from 'vitest';
import { type MarkdownRenderer, plainText, renderMarkdown } from './markdown.ts';

/** A renderer that shows which rule made each piece. */
const TAGGED: MarkdownRenderer = {
  escape: (text) => text.replaceAll('<', '‹').replaceAll('>', '›'),
  codeBlock: (code, language) => `[code ${language}|${code}]`,
  inlineCode: (code) => `[c|${code}]`,
  bold: (inner) => `[b|${inner}]`,
  italic: (inner) => `[i|${inner}]`,
  strike: (inner) => `[s|${inner}]`,
  link: (label, url) => `[a ${url}|${label}]`,
  heading: (inner) => `[h|${inner}]`,
  bullet: '*',
};

describe('renderMarkdown', () => {
  it('renders what models write, keeping the lines and blank lines of the source', () => {
    const markdown = [
      '## Plan',
      'Call **Ana** about the _Q3_ ~~draft~~ budget, see `notes.md`.',
      'Second line.',
      '',
      '- first',
      '- second with [a link](https://example.org/x)',
      '  - nested',
      '',
      '3. three',
      '4. four',
      '',
      '```ts',
      'const a = 1 < 2;',
      '```',
      '> quoted',
    ].join('\n');
    expect(renderMarkdown(markdown, TAGGED)).toBe(
      [
        '[h|Plan]',
        'Call [b|Ana] about the [i|Q3] [s|draft] budget, see [c|notes.md].',
        'Second line.',
        '',
        '* first',
        '* second with [a https://example.org/x|a link]',
        '  * nested',
        '',
        '3. three',
        '4. four',
        '',
        '[code ts|const a = 1 < 2;]',
        '› quoted',
      ].join('\n'),
    );
  });

  it('leaves snake_case, raw HTML, backslash escapes and unsafe links as text', () => {
    expect(renderMarkdown('task_id and <b>bold</b>', TAGGED)).toBe('task_id and ‹b›bold‹/b›');
    expect(renderMarkdown('✓ tasks.create — Alpha\\_plan \\*x\\*', TAGGED)).toBe(
      '✓ tasks.create — Alpha_plan *x*',
    );
    expect(renderMarkdown('[click](javascript:alert(1))', TAGGED)).toBe('[click](javascript:alert(1))');
  });

  it('writes tables as lines and plain text without markup', () => {
    expect(renderMarkdown('| a | b |\n|---|---|\n| 1 | **2** |', TAGGED)).toBe('a | b\n1 | [b|2]');
    expect(plainText('**Done**: see [the doc](https://example.org/doc) & `x`')).toBe(
      'Done: see the doc (https://example.org/doc) & x',
    );
  });
});
