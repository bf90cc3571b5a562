import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lineDiff } from './line-diff.ts';

/** Applies a diff made by lineDiff to `before` (the test's own reading of the hunks). */
function apply(before: string, diff: string): string {
  const lines = before === '' ? [] : before.replace(/\n$/, '').split('\n');
  const out: string[] = [];
  let at = 0;
  for (const line of diff.split('\n')) {
    const header = /^@@ -(\d+),(\d+) \+\d+,\d+ @@$/.exec(line);
    if (header) {
      const start = Number(header[2]) === 0 ? Number(header[1]) : Number(header[1]) - 1;
      out.push(...lines.slice(at, start));
      at = start;
    } else if (line.startsWith('-')) at++;
    else if (line.startsWith('+')) out.push(line.slice(1));
    else {
      out.push(lines[at]!);
      at++;
    }
  }
  out.push(...lines.slice(at));
  return out.join('\n');
}

describe('lineDiff', () => {
  it('is empty for equal texts', () => {
    expect(lineDiff('a\nb\n', 'a\nb\n')).toBe('');
  });

  it('shows a changed line with two lines of context', () => {
    const before = ['one', 'two', 'three', 'four', 'five', 'six', 'seven'].join('\n');
    const after = before.replace('four', 'FOUR');
    expect(lineDiff(before, after)).toBe(
      ['@@ -2,5 +2,5 @@', ' two', ' three', '-four', '+FOUR', ' five', ' six'].join('\n'),
    );
  });

  it('writes separate hunks for changes far apart', () => {
    const lines = Array.from({ length: 20 }, (_, i) => `line ${i}`);
    const after = [...lines];
    after[1] = 'changed 1';
    after[18] = 'changed 18';
    const diff = lineDiff(lines.join('\n'), after.join('\n'));
    expect(diff.split('\n').filter((line) => line.startsWith('@@'))).toHaveLength(2);
  });

  it('turns the first text into the second, whatever they are', () => {
    const text = fc
      .array(fc.constantFrom('a', 'b', 'c', 'd', ''), { maxLength: 12 })
      .map((lines) => lines.join('\n'));
    fc.assert(
      fc.property(text, text, (before, after) => {
        const diff = lineDiff(before, after);
        if (before === after) expect(diff).toBe('');
        else expect(apply(before, diff)).toBe(after.replace(/\n$/, ''));
      }),
    );
  });
});
