import { describe, expect, it } from 'vitest';
import { speakableText, spokenReply } from './speakable.ts';

describe('speakable replies', () => {
  it('turns markdown into words to speak', () => {
    expect(speakableText('**Two** tasks:\n- draft the [report](https://x.example)\n- call `Ana`')).toBe(
      'Two tasks:\ndraft the report\ncall Ana',
    );
    expect(speakableText('| task | due |\n|---|---|\n| report | friday |')).toBe('task, due\nreport, friday');
  });

  it('speaks a short answer whole, and a long one as its opening with a pointer to the text', () => {
    expect(spokenReply('See you at nine.', 600)).toEqual({ spoken: 'See you at nine.', long: false });
    const long = spokenReply(`${'This is a sentence about the plan. '.repeat(30)}`, 600);
    expect(long.long).toBe(true);
    expect(long.spoken.length).toBeLessThan(600);
    expect(long.spoken).toMatch(/^This is a sentence about the plan\./);
    expect(long.spoken).toContain('full answer');
  });
});
