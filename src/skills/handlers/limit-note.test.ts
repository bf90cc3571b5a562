import { expect, it } from 'vitest';
import { limitNote } from './limit-note.ts';

it('says a search that returned its limit may have more, and nothing otherwise', () => {
  expect(limitNote(3, 10, 50)).toBe('');
  expect(limitNote(10, 10, 50)).toBe(
    '\nShowing the first 10: there may be more. Narrow the search, or raise --limit (at most 50).',
  );
  expect(limitNote(50, 50, 50)).toBe(
    '\nShowing the first 50 (the most one search returns): there may be more. Narrow the search.',
  );
});
