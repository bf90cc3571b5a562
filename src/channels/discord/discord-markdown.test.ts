import { describe, expect, it } from 'vitest';
import { discordMarkdown } from './discord-markdown.ts';

describe('discordMarkdown', () => {
  it('keeps what Discord reads as the model meant it and rewrites what it reads differently', () => {
    expect(discordMarkdown('**Done**: see `tasks.list` and [docs](https://example.com/a?b=1&c=2)')).toBe(
      '**Done**: see `tasks.list` and [docs](https://example.com/a?b=1&c=2)',
    );
    // Discord underlines __x__; the model meant bold. Headings become bold lines.
    expect(discordMarkdown('# Plan\n- __one__\n* _two_\n- ~~three~~')).toBe(
      '**Plan**\n- **one**\n- *two*\n- ~~three~~',
    );
  });

  it('keeps a backslash escape, code with backticks, and a fence inside a code block', () => {
    expect(discordMarkdown('2 \\* 3 is not emphasis')).toBe('2 \\* 3 is not emphasis');
    expect(discordMarkdown('run `a`b` now')).toBe('run `a`b` now');
    expect(discordMarkdown('```md\nuse ``` to fence\n```')).toBe('```md\nuse `\u200b`` to fence\n```');
  });

  it('leaves snake_case, URLs and mentions-looking text as written (allowed_mentions stops pings)', () => {
    expect(discordMarkdown('due_before https://x.example/a_b_c @everyone')).toBe(
      'due_before https://x.example/a_b_c @everyone',
    );
  });
});
