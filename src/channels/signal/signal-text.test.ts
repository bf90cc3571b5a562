import { expect, it } from 'vitest';
import { signalStyledText } from './signal-text.ts';

it('writes markdown in Signal text styles, escaping literal style marks, code included', () => {
  expect(signalStyledText('**bold**, _italic_ and ~~gone~~')).toBe('**bold**, *italic* and ~gone~');
  expect(signalStyledText('2 * 3 ~ a|b || c')).toBe('2 \\* 3 \\~ a\\|b \\|\\| c');
  expect(signalStyledText('run `ls *.ts`')).toBe('run `ls \\*.ts`');
  expect(signalStyledText('# Plan\n\n- one\n- [site](https://x.example/~me)')).toBe(
    '**Plan**\n\n• one\n• site (https://x.example/\\~me)',
  );
});
