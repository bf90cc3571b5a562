import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { codeUnit, trickyCharacter } from '../../../test/support/arbitraries.ts';
import { quoteArg } from './quote-arg.ts';
import { tokenize } from './tokenize.ts';

describe('quoteArg', () => {
  it('leaves plain words bare', () => {
    expect(['bob@co.com', '2024-01-31', '-5', 'a,b', 'x=y', 'path/to/file.md'].map(quoteArg)).toEqual([
      'bob@co.com',
      '2024-01-31',
      '-5',
      'a,b',
      'x=y',
      'path/to/file.md',
    ]);
  });

  it('quotes text with spaces, quotes, #, an empty value, and anything that would read as a flag', () => {
    expect(quoteArg('Q1 report')).toBe(`'Q1 report'`);
    expect(quoteArg("it's")).toBe(`'it'"'"'s'`);
    expect(quoteArg('')).toBe(`''`);
    expect(quoteArg('#urgent')).toBe(`'#urgent'`);
    expect(quoteArg('--draft')).toBe(`'--draft'`);
    expect(quoteArg('--')).toBe(`'--'`);
  });

  it('keeps multi-line text on one line with double-quote escapes', () => {
    expect(quoteArg('Hi "Bob",\n\tC:\\x')).toBe(String.raw`"Hi \"Bob\",\n\tC:\\x"`);
  });

  const values = {
    'printable ASCII': fc.string(),
    'any code point': fc.string({ unit: 'binary' }),
    'code units, lone surrogates included': fc.string({ unit: codeUnit }),
    'quotes, backslashes and newlines': fc.string({ unit: trickyCharacter }),
  };
  for (const [name, value] of Object.entries(values)) {
    it(`round-trips any array of ${name} through tokenize`, () => {
      fc.assert(
        fc.property(fc.array(value, { maxLength: 8 }), (array) => {
          const result = tokenize(array.map(quoteArg).join(' '));
          expect(result.ok && result.tokens.map((token) => token.value)).toEqual(array);
        }),
        { numRuns: 500 },
      );
    });
  }

  it('never yields a token that could be taken for a flag', () => {
    fc.assert(
      fc.property(fc.string({ unit: trickyCharacter }), (value) => {
        const result = tokenize(quoteArg(`--${value}`));
        expect(result.ok && result.tokens[0]?.quoted).toBe(true);
      }),
    );
  });
});
