import { describe, expect, it } from 'vitest';
import { discordMarkdown } from './discord-markdown.ts';

describe('discordMarkdown', () => {
  it('writes the markup the model meant the way Discord reads it', () => {
    expect(discordMarkdown('**Done**: see `tasks.list` and [docs](https://example.com/a?b=1&c=2)')).toBe(
      '**Done**: see `tasks.list` and [docs](https://example.com/a?b=1&c=2)',
    );
    // Discord underlines __x__; the model meant bold. Headings become bold lines.
    expect(discordMarkdown('# Plan\n\n- __one__\n- _two_\n- ~~three~~')).toBe(
      '**Plan**\n\n- **one**\n- *two*\n- ~~three~~',
    );
    expect(discordMarkdown('1. first\n2. second\n\n> quoted')).toBe('1. first\n2. second\n\n> quoted');
  });

  it('shows literal text as written: stray stars, underscores, pipes and mention syntax are escaped', () => {
    expect(discordMarkdown('2 \\* 3 = 6, a * b, snake_case, a||b||, <@123>')).toBe(
      '2 \\* 3 = 6, a \\* b, snake\\_case, a\\|\\|b\\|\\|, \\<@123>',
    );
    expect(discordMarkdown('https://x.example/a_b_c')).toBe('https://x.example/a_b_c');
  });

  it('keeps code as written, and a fence inside a code block cannot end it', () => {
    expect(discordMarkdown('run `a_b*c` now')).toBe('run `a_b*c` now');
    expect(discordMarkdown('```md\nuse ``` to fence\n```')).toBe('```md\nuse `\u200b`` to fence\n```');
  });
});
