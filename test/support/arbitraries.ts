import fc from 'fast-check';

/** Characters that break naive command tokenizers: quotes, escapes, whitespace, flag syntax, non-ASCII. */
export const trickyCharacter = fc.constantFrom(
  '"',
  "'",
  '\\',
  '\n',
  '\r',
  ' ',
  '\t',
  '-',
  '=',
  '#',
  '`',
  'a',
  'é',
  '😀',
);

/** Any single UTF-16 code unit, lone surrogates included. */
export const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code));
