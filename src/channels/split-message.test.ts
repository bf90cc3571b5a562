import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitMessage } from './split-message.ts';

describe('splitMessage', () => {
  it('keeps a short reply whole', () => {
    expect(splitMessage('Hello there.', 100)).toEqual(['Hello there.']);
  });

  it('splits on paragraph boundaries before anything else', () => {
    const first = 'a'.repeat(60);
    const second = 'b'.repeat(60);
    expect(splitMessage(`${first}\n\n${second}`, 100)).toEqual([first, second]);
    expect(splitMessage(`${first}\n\nshort\n\n${second}`, 100)).toEqual([`${first}\n\nshort`, second]);
  });

  it('cuts an over-long paragraph on words, and a long code block into code blocks', () => {
    const words = Array.from({ length: 40 }, (_, index) => `word${index}`).join(' ');
    const pieces = splitMessage(words, 50);
    expect(pieces.every((piece) => piece.length <= 50)).toBe(true);
    expect(pieces.every((piece) => !piece.startsWith(' ') && !piece.endsWith(' '))).toBe(true);
    expect(pieces.join(' ')).toBe(words);
    const code = `\`\`\`ts\n${Array.from({ length: 30 }, (_, index) => `const x${index} = ${index};`).join('\n')}\n\`\`\``;
    const blocks = splitMessage(code, 120);
    expect(blocks.length).toBeGreaterThan(1);
    for (const block of blocks) {
      expect(block.length).toBeLessThanOrEqual(120);
      expect(block.startsWith('```ts\n')).toBe(true);
      expect(block.endsWith('\n```')).toBe(true);
    }
  });

  it('never exceeds the limit and loses no words (property)', () => {
    const word = fc.stringMatching(/^[a-z]{1,12}$/);
    const paragraph = fc.array(word, { minLength: 1, maxLength: 30 }).map((words) => words.join(' '));
    fc.assert(
      fc.property(
        fc.array(paragraph, { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 20, max: 200 }),
        (paragraphs, limit) => {
          const text = paragraphs.join('\n\n');
          const pieces = splitMessage(text, limit);
          for (const piece of pieces) expect(piece.length).toBeLessThanOrEqual(limit);
          const words = (value: string) => value.split(/\s+/).filter(Boolean);
          expect(pieces.flatMap(words)).toEqual(words(text));
        },
      ),
    );
  });

  it('measures with the channel’s own length', () => {
    const measure = (value: string) => value.replaceAll('&', '&amp;').length;
    const pieces = splitMessage('&'.repeat(30), 50, measure);
    expect(pieces.every((piece) => measure(piece) <= 50)).toBe(true);
    expect(pieces.join('')).toBe('&'.repeat(30));
  });
});
