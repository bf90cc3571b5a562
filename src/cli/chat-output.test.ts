import { expect, it } from 'vitest';
import { afterStream } from './chat-output.ts';

it('prints what the stream did not carry: nothing, the receipt lines, or the whole reply', () => {
  expect(afterStream('Hello.', 'Hello.')).toBe('\n');
  expect(afterStream('Added it.', 'Added it.\n\n✓ tasks.create — Alpha (t_1)')).toBe(
    '\n\n✓ tasks.create — Alpha (t_1)\n',
  );
  expect(afterStream('Let me look.', 'You have two tasks.')).toBe('\nYou have two tasks.\n');
  expect(afterStream('', 'Not streamed.')).toBe('Not streamed.\n');
});
