import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizeFlagName, type ParsedCommand, parseCommand } from './parse-command.ts';

function parsed(command: string): ParsedCommand {
  const result = parseCommand(command);
  if (!result.ok) throw new Error(`expected ${JSON.stringify(command)} to parse, got: ${result.error}`);
  return result.command;
}

function failure(command: string): string {
  const result = parseCommand(command);
  if (result.ok)
    throw new Error(`expected ${JSON.stringify(command)} to fail, got ${JSON.stringify(result.command)}`);
  return result.error;
}

describe('parseCommand', () => {
  it('reads the skill, positionals and flags of a typical command', () => {
    expect(
      parseCommand('  email.send --to bob@co.com --subject "Q1 Report" --body \'See attached.\'  '),
    ).toEqual({
      ok: true,
      command: {
        skill: 'email.send',
        positionals: [],
        flags: { to: 'bob@co.com', subject: 'Q1 Report', body: 'See attached.' },
        help: false,
        raw: 'email.send --to bob@co.com --subject "Q1 Report" --body \'See attached.\'',
      },
    });
  });

  it('takes tokens before the first flag as positionals', () => {
    expect(parsed('files.read notes/today.md "my file.txt" --lines 10')).toMatchObject({
      skill: 'files.read',
      positionals: ['notes/today.md', 'my file.txt'],
      flags: { lines: '10' },
    });
  });

  it('reads get_skill with or without a colon', () => {
    expect(parsed('get_skill: email')).toMatchObject({ skill: 'get_skill', positionals: ['email'] });
    expect(parsed('get_skill:email.send')).toMatchObject({ skill: 'get_skill', positionals: ['email.send'] });
    expect(parsed('get_skill')).toMatchObject({ skill: 'get_skill', positionals: [], flags: {} });
    expect(parsed('get_skill --search "weekly report"')).toMatchObject({
      skill: 'get_skill',
      flags: { search: 'weekly report' },
    });
  });

  it('reads --flag=value, keeping everything after the first = (including more =)', () => {
    expect(parsed('x.y --title="a b" --query=a=b --empty=').flags).toEqual({
      title: 'a b',
      query: 'a=b',
      empty: '',
    });
  });

  it('collects the values up to the next flag into an array', () => {
    expect(parsed('tasks.search --status todo blocked --limit 5').flags).toEqual({
      status: ['todo', 'blocked'],
      limit: '5',
    });
    expect(parsed('tasks.create --title=Buy milk --due friday').flags).toEqual({
      title: ['Buy', 'milk'],
      due: 'friday',
    });
  });

  it('makes a flag with no value true, before another flag or at the end', () => {
    expect(parsed('tasks.search --overdue --mine --limit 3 --verbose').flags).toEqual({
      overdue: true,
      mine: true,
      limit: '3',
      verbose: true,
    });
  });

  it('accumulates a repeated flag into one flat array', () => {
    expect(parsed('notes.add --tag home --tag work urgent --tag').flags).toEqual({
      tag: ['home', 'work', 'urgent'],
    });
    expect(parsed('x.y --tag=a --tag=b').flags).toEqual({ tag: ['a', 'b'] });
    expect(parsed('x.y --tag a --tag').flags).toEqual({ tag: ['a'] });
    expect(parsed('x.y --force --force').flags).toEqual({ force: true });
  });

  it('normalizes flag names: case and dashes vs underscores', () => {
    expect(parsed('tasks.search --due-before 2024-01-01 --Due_After 2023-12-01').flags).toEqual({
      due_before: '2024-01-01',
      due_after: '2023-12-01',
    });
    expect(parsed('tasks.search --due-before a --due_before b').flags).toEqual({ due_before: ['a', 'b'] });
    expect(normalizeFlagName('Due-Before')).toBe('due_before');
  });

  it('treats everything after -- as positionals', () => {
    expect(parsed('notes.add --tag x -- --not-a-flag "and this" --help')).toMatchObject({
      positionals: ['--not-a-flag', 'and this', '--help'],
      flags: { tag: 'x' },
      help: false,
    });
  });

  it('takes a quoted token that starts with -- as a value, not a flag', () => {
    expect(parsed(`notes.add --text "--draft" '--x' --y`).flags).toEqual({
      text: ['--draft', '--x'],
      y: true,
    });
    expect(parsed(`notes.add "--draft"`).positionals).toEqual(['--draft']);
  });

  it('takes negative numbers and single-dash tokens as values', () => {
    expect(parsed('calendar.shift -5 --by -30 --note -x').flags).toEqual({ by: '-30', note: '-x' });
    expect(parsed('calendar.shift -5 --by -30').positionals).toEqual(['-5']);
  });

  it('sets help for --help anywhere among the flags and leaves it out of flags', () => {
    expect(parsed('tasks.search --help')).toMatchObject({ help: true, flags: {} });
    expect(parsed('email.send --to bob --help --subject hi')).toMatchObject({
      help: true,
      flags: { to: 'bob', subject: 'hi' },
    });
    expect(parsed('email.send --HELP').help).toBe(true);
    expect(parsed('email.send').help).toBe(false);
  });

  it('stores a flag named like an Object.prototype member as a plain value', () => {
    const flags = parsed('x.y --constructor a --to-string b').flags;
    expect(flags).toEqual({ constructor: 'a', to_string: 'b' });
    expect(Object.hasOwn(flags, 'constructor')).toBe(true);
  });

  it('fails on an empty command', () => {
    expect(failure('')).toMatch(/^Empty command\./);
    expect(failure(' \n\t ')).toMatch(/^Empty command\./);
  });

  it('fails when the command does not start with a skill name, saying how to fix it', () => {
    expect(failure('--status open')).toBe(
      'A command must start with a skill name like `tasks.search`, but it starts with the flag `--status`. Put the skill name first.',
    );
    expect(failure('Tasks.Search --q x')).toContain('Skill names are lowercase: `tasks.search`.');
    expect(failure('$ tasks.search')).toContain('Drop the prompt sign.');
    expect(failure('Please search my tasks')).toBe(
      'A command must start with a skill name like `tasks.search`, but got `Please`. Names are lowercase words joined by dots.',
    );
    for (const bad of ['tasks.', '.tasks', 'tasks..search', '9tasks', 'tasks-search', 'tasks.Search']) {
      expect(failure(bad)).toMatch(/^A command must start with a skill name like `tasks.search`/);
    }
  });

  it('fails on a flag name it cannot read', () => {
    expect(failure('x.y ---verbose')).toMatch(/^Bad flag `---verbose`: .*like `--due-before`/);
    expect(failure('x.y --=5')).toMatch(/^Bad flag `--=5`/);
    expect(failure('x.y --due.before 5')).toMatch(/^Bad flag `--due.before`/);
    expect(failure('x.y --__proto__ 5')).toMatch(/^Bad flag/);
  });

  it('passes the tokenizer error through', () => {
    expect(failure('email.send --subject "Q1 --to bob')).toBe(
      'Unterminated double quote starting at column 22. Close the quote or use single quotes for text containing ".',
    );
  });

  it('never throws', () => {
    const tricky = fc.constantFrom(
      '"',
      "'",
      '\\',
      '\n',
      ' ',
      '--',
      '-',
      '=',
      ':',
      'a',
      '.',
      'get_skill',
      '--help',
    );
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: tricky })), (command) => {
        const result = parseCommand(command);
        expect(result.ok ? typeof result.command.skill : typeof result.error).toBe('string');
      }),
      { numRuns: 500 },
    );
  });
});
