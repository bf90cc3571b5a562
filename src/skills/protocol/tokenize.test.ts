import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { codeUnit, trickyCharacter } from '../../../test/support/arbitraries.ts';
import { tokenize } from './tokenize.ts';

function words(command: string): string[] {
  const result = tokenize(command);
  if (!result.ok) throw new Error(`expected ${JSON.stringify(command)} to tokenize, got: ${result.error}`);
  return result.tokens.map((token) => token.value);
}

describe('tokenize', () => {
  it('splits on any run of whitespace, including tabs and newlines', () => {
    expect(words('  tasks.search\t--status   open\r\n--limit 5  ')).toEqual([
      'tasks.search',
      '--status',
      'open',
      '--limit',
      '5',
    ]);
    expect(words('')).toEqual([]);
    expect(words(' \t\n ')).toEqual([]);
  });

  it('keeps single-quoted text literally, backslashes and double quotes included', () => {
    expect(words(`x 'a "b" \\n \\ c'`)).toEqual(['x', 'a "b" \\n \\ c']);
  });

  it('decodes \\" \\\\ \\n \\t inside double quotes and keeps other backslash sequences', () => {
    expect(words(String.raw`"say \"hi\"" "a\\b" "one\ntwo\tthree" "C:\Users\x \d"`)).toEqual([
      'say "hi"',
      'a\\b',
      'one\ntwo\tthree',
      'C:\\Users\\x \\d',
    ]);
  });

  it('joins adjacent quoted and unquoted pieces into one token', () => {
    expect(words(`--title="Q1 report" 'it'"'"'s' pre"fix"'post'`)).toEqual([
      '--title=Q1 report',
      "it's",
      'prefixpost',
    ]);
  });

  it('marks a token quoted only when it opens with a quote', () => {
    const result = tokenize(`"--draft" --title="a b" '' plain`);
    expect(result).toEqual({
      ok: true,
      tokens: [
        { value: '--draft', quoted: true },
        { value: '--title=a b', quoted: false },
        { value: '', quoted: true },
        { value: 'plain', quoted: false },
      ],
    });
  });

  it('lets a quoted value span lines', () => {
    expect(words('email.send --body "Hi Bob,\n\nSee you.\n" --to bob')).toEqual([
      'email.send',
      '--body',
      'Hi Bob,\n\nSee you.\n',
      '--to',
      'bob',
    ]);
  });

  it('treats backslash-newline outside quotes as whitespace, even with stray spaces after the backslash', () => {
    expect(words('tasks.create --title x \\\n  --due friday')).toEqual([
      'tasks.create',
      '--title',
      'x',
      '--due',
      'friday',
    ]);
    expect(words('a\\\nb')).toEqual(['a', 'b']);
    expect(words('a \\  \r\nb')).toEqual(['a', 'b']);
  });

  it('drops a lone trailing backslash (a continuation into nothing) but keeps one ending a word', () => {
    expect(words('tasks.list --all \\')).toEqual(['tasks.list', '--all']);
    expect(words('files.read C:\\dir\\')).toEqual(['files.read', 'C:\\dir\\']);
  });

  it('outside quotes, a backslash escapes space, quotes and backslash, and is literal before anything else', () => {
    expect(words(String.raw`my\ file.txt don\'t \"x\" a\\b C:\Users\me \d+`)).toEqual([
      'my file.txt',
      "don't",
      '"x"',
      'a\\b',
      'C:\\Users\\me',
      '\\d+',
    ]);
  });

  it('reports an unterminated double quote with its column and a fix', () => {
    const command = 'email.send --subject "Q1 report --to bob';
    const result = tokenize(command);
    expect(result).toEqual({
      ok: false,
      error:
        'Unterminated double quote starting at column 22. Close the quote or use single quotes for text containing ".',
      position: 21,
    });
    expect(command[21]).toBe('"');
  });

  it('reports an unterminated single quote: an apostrophe closes the quote early and the last one is left open', () => {
    const result = tokenize(`tasks.create --title 'Bob's task'`);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.position).toBe(32);
    expect(result.error).toMatch(/^Unterminated single quote starting at column 33\./);
    expect(result.error).toContain('double quotes');
  });

  it('gives line and column for a multi-line command, and explains an escaped closing quote', () => {
    const result = tokenize('files.write \\\n  --path "C:\\dir\\" --mode x');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toContain('starting at line 2, column 10.');
    expect(result.error).toContain('\\" is a literal quote');
  });

  it('counts columns in characters, not UTF-16 units', () => {
    const result = tokenize('notes.add 😀 "open');
    expect(result.ok === false && result.error).toContain('column 13.');
  });
});

describe('tokenize never throws', () => {
  const inputs = {
    'printable ASCII': fc.string({ maxLength: 200 }),
    'any code point': fc.string({ unit: 'binary', maxLength: 200 }),
    graphemes: fc.string({ unit: 'grapheme', maxLength: 100 }),
    'code units, lone surrogates included': fc.string({ unit: codeUnit, maxLength: 200 }),
    'quotes, backslashes and newlines': fc.string({ unit: trickyCharacter, maxLength: 300 }),
  };
  for (const [name, arbitrary] of Object.entries(inputs)) {
    it(`on ${name}, and an error points at an opening quote`, () => {
      fc.assert(
        fc.property(arbitrary, (input) => {
          const result = tokenize(input);
          if (result.ok) {
            for (const token of result.tokens) expect(typeof token.value).toBe('string');
          } else {
            expect(['"', "'"]).toContain(input[result.position]);
            expect(result.error).toMatch(/^Unterminated (single|double) quote starting at /);
          }
        }),
        { numRuns: 500 },
      );
    });
  }
});
