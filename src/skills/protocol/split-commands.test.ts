import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatCommand } from './format-command.ts';
import { splitCommands } from './split-commands.ts';

describe('splitCommands', () => {
  it('returns one command per line, trimmed, skipping blank and # lines', () => {
    const block = [
      '# look first',
      'tasks.search --status overdue',
      '',
      '   ',
      '  # then write',
      '  email.send --to bob --tag #weekly  ',
    ].join('\n');
    expect(splitCommands(block)).toEqual([
      'tasks.search --status overdue',
      'email.send --to bob --tag #weekly',
    ]);
  });

  it('continues a line that ends with a backslash, CRLF and stray spaces included', () => {
    expect(
      splitCommands('tasks.create --title x \\\n  --due friday \\  \r\n  --priority high\r\ntasks.list'),
    ).toEqual(['tasks.create --title x \\\n  --due friday \\  \r\n  --priority high', 'tasks.list']);
  });

  it('treats a line after a continuation as part of the command even when it starts with #', () => {
    expect(splitCommands('notes.add --tags \\\n#home')).toEqual(['notes.add --tags \\\n#home']);
  });

  it('does not split on a newline inside single or double quotes', () => {
    const block = `email.send --body "Hi,\n\n# not a comment\nBob" --to bob\nnotes.add 'one\ntwo'\ntasks.list`;
    expect(splitCommands(block)).toEqual([
      `email.send --body "Hi,\n\n# not a comment\nBob" --to bob`,
      `notes.add 'one\ntwo'`,
      'tasks.list',
    ]);
  });

  it('does not end a double-quoted value at an escaped quote', () => {
    expect(splitCommands('notes.add "say \\"hi\nthere\\"" --x\ntasks.list')).toEqual([
      'notes.add "say \\"hi\nthere\\"" --x',
      'tasks.list',
    ]);
  });

  it('makes the rest of the block one command after an unterminated quote', () => {
    expect(splitCommands(`tasks.create --title 'Bob's task'\ntasks.list\nemail.send`)).toEqual([
      `tasks.create --title 'Bob's task'\ntasks.list\nemail.send`,
    ]);
    expect(splitCommands('notes.add "unclosed\n\n# still inside')).toEqual([
      'notes.add "unclosed\n\n# still inside',
    ]);
  });

  it('returns nothing for an empty or comment-only block', () => {
    expect(splitCommands('')).toEqual([]);
    expect(splitCommands('\n# nothing to run\n\n')).toEqual([]);
  });

  it('never throws, and gives back any list of formatted commands joined by newlines', () => {
    const value = fc.string({ unit: fc.constantFrom('"', "'", '\\', '\n', '\r', ' ', '#', 'a', '-') });
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.array(value, { maxLength: 3 }),
            fc.dictionary(fc.stringMatching(/^[a-z]{1,5}$/), value),
          ),
          {
            maxLength: 5,
          },
        ),
        (parts) => {
          const commands = parts.map(([positionals, flags]) =>
            formatCommand('notes.add', flags, positionals),
          );
          expect(splitCommands(commands.join('\n'))).toEqual(commands);
        },
      ),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (block) => {
        expect(Array.isArray(splitCommands(block))).toBe(true);
      }),
    );
  });
});
