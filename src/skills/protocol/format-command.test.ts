import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatCommand } from './format-command.ts';
import { type FlagValue, parseCommand } from './parse-command.ts';

describe('formatCommand', () => {
  it('renders skill, positionals, then flags with dashed names, quoting only what needs it', () => {
    expect(
      formatCommand(
        'tasks.search',
        { due_before: '2024-01-01', status: ['todo', 'in progress'], mine: true },
        ['x'],
      ),
    ).toBe("tasks.search x --due-before 2024-01-01 --status todo 'in progress' --mine");
    expect(formatCommand('email.send', { body: 'Hi,\nit\'s "done"' })).toBe(
      String.raw`email.send --body "Hi,\nit's \"done\""`,
    );
    expect(formatCommand('notes.add', { text: '--draft' }, ['--', '-5'])).toBe(
      "notes.add '--' -5 --text '--draft'",
    );
    expect(formatCommand('get_skill', {})).toBe('get_skill');
  });

  const skill = fc.oneof(
    fc.constant('get_skill'),
    fc.stringMatching(/^[a-z][a-z0-9_]{0,8}(\.[a-z][a-z0-9_]{0,8}){0,2}$/),
  );
  const flagName = fc.stringMatching(/^[a-z0-9][a-z0-9_]{0,10}$/).filter((name) => name !== 'help');
  const text = fc.oneof(
    fc.string({ unit: 'binary' }),
    fc.string({ unit: fc.constantFrom('"', "'", '\\', '\n', '\t', ' ', '-', '=', '#', 'a') }),
  );
  const flagValue: fc.Arbitrary<FlagValue> = fc.oneof(
    fc.constant<true>(true),
    text,
    fc.array(text, { minLength: 2, maxLength: 4 }),
  );

  it('round-trips through parseCommand', () => {
    fc.assert(
      fc.property(
        skill,
        fc.dictionary(flagName, flagValue, { maxKeys: 5 }),
        fc.array(text, { maxLength: 3 }),
        (name, flags, positionals) => {
          expect(parseCommand(formatCommand(name, flags, positionals))).toEqual({
            ok: true,
            command: expect.objectContaining({ skill: name, flags, positionals, help: false }),
          });
        },
      ),
      { numRuns: 500 },
    );
  });

  it('writes a one-element array as a plain value', () => {
    const result = parseCommand(formatCommand('notes.add', { tag: ['home'] }));
    expect(result.ok && result.command.flags).toEqual({ tag: 'home' });
  });
});
