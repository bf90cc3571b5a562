import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { extractCommands, findCommandBlocks } from './extract-commands.ts';

const fence = '```';

describe('extractCommands', () => {
  it('takes the commands out of a realistic reply, prose before, between and after', () => {
    const reply = [
      "I'll search for your overdue tasks and send them to Bob.",
      '',
      `${fence}cmd`,
      'tasks.search --status overdue --assignee me',
      fence,
      '',
      'Found 3 overdue tasks. Sending the report now.',
      '',
      `${fence}cmd`,
      'email.send --to bob@co.com --subject "Overdue Tasks Report" --body "Here are the 3 overdue tasks: ..."',
      fence,
      '',
      'Done! Report sent to Bob.',
    ].join('\n');
    expect(extractCommands(reply)).toEqual([
      'tasks.search --status overdue --assignee me',
      'email.send --to bob@co.com --subject "Overdue Tasks Report" --body "Here are the 3 overdue tasks: ..."',
    ]);
  });

  it('handles several commands per fence with comments, continuations and a multi-line quoted value', () => {
    const reply = [
      'Three steps:',
      `${fence}cmd   `,
      '# first, the task',
      'tasks.create --title "Prepare Q1 review" \\',
      '  --due 2024-03-29 \\',
      '  --priority high',
      '',
      '# then tell the team',
      'email.send --to team@co.com --subject "Q1 review" --body "Hi all,',
      '',
      'The Q1 review is on Friday.',
      '# bring numbers',
      'Thanks"',
      "memory.save --text 'Q1 review scheduled'",
      fence,
      'That is all.',
    ].join('\n');
    expect(extractCommands(reply)).toEqual([
      'tasks.create --title "Prepare Q1 review" \\\n  --due 2024-03-29 \\\n  --priority high',
      'email.send --to team@co.com --subject "Q1 review" --body "Hi all,\n\nThe Q1 review is on Friday.\n# bring numbers\nThanks"',
      "memory.save --text 'Q1 review scheduled'",
    ]);
  });

  it('ignores other code blocks and a cmd fence that is not on its own line', () => {
    const reply = [
      'Use a ```cmd block like this.',
      `${fence}bash`,
      'rm -rf /',
      fence,
      `${fence}cmdx`,
      'not.this',
      fence,
      `${fence}json`,
      '{"a": 1}',
      fence,
    ].join('\n');
    expect(extractCommands(reply)).toEqual([]);
    expect(extractCommands('')).toEqual([]);
    expect(extractCommands('Just an answer, no commands.')).toEqual([]);
  });

  it('accepts CRLF line ends, indented fences and an upper-case info string', () => {
    const reply = `Steps:\r\n1. Look:\r\n   ${fence}CMD\r\n   tasks.search --q "x"\r\n   ${fence}\r\nok`;
    expect(extractCommands(reply)).toEqual(['tasks.search --q "x"']);
  });

  it('takes an unterminated final fence to the end of the text', () => {
    expect(extractCommands(`Running:\n${fence}cmd\ntasks.list --all\nnotes.add hi`)).toEqual([
      'tasks.list --all',
      'notes.add hi',
    ]);
    expect(extractCommands(`${fence}cmd`)).toEqual([]);
  });

  it('tolerates a closing fence glued to the last command, and an opener that implicitly closes the block before it', () => {
    const reply = `${fence}cmd\ntasks.list${fence}\nthen\n${fence}cmd\nnotes.add a\n${fence}cmd\nnotes.add b\n${fence}`;
    expect(extractCommands(reply)).toEqual(['tasks.list', 'notes.add a', 'notes.add b']);
  });

  it('lets a four-backtick fence hold a value with a ``` line in it', () => {
    const reply = `${fence}\`cmd\nemail.send --body "Run:\n${fence}\nnpm test\n${fence}\n"\n${fence}\`\nSent.`;
    expect(extractCommands(reply)).toEqual([`email.send --body "Run:\n${fence}\nnpm test\n${fence}\n"`]);
  });

  it('never throws on arbitrary text', () => {
    const piece = fc.constantFrom(
      `${fence}cmd\n`,
      `${fence}\n`,
      fence,
      '"',
      "'",
      '\\',
      '\n',
      ' ',
      '#',
      'a.b --x ',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), fc.string({ unit: 'binary' }), (pieces, noise) => {
        expect(Array.isArray(extractCommands(pieces.join('') + noise))).toBe(true);
      }),
    );
  });
});

describe('findCommandBlocks', () => {
  it('gives each fence span so the caller can strip it from the prose', () => {
    const reply = `Before.\n${fence}cmd\ntasks.list\n${fence}\nAfter.\n${fence}cmd\nnotes.add x`;
    const blocks = findCommandBlocks(reply);
    expect(blocks.map(({ body, closed }) => ({ body, closed }))).toEqual([
      { body: 'tasks.list\n', closed: true },
      { body: 'notes.add x', closed: false },
    ]);
    let prose = reply;
    for (const block of [...blocks].reverse()) prose = prose.slice(0, block.start) + prose.slice(block.end);
    expect(prose).toBe('Before.\n\nAfter.\n');
  });
});
