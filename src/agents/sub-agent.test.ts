import { describe, expect, it } from 'vitest';
import { fenceExternal } from '../skills/index.ts';
import { shortened } from './sub-agent.ts';

describe('shortened', () => {
  it('leaves a short result as it is', () => {
    expect(shortened('three tasks')).toBe('three tasks');
  });

  it('says a long result was cut, and how much is missing, closing an open fence', () => {
    const long = fenceExternal('email:1', 'x'.repeat(5_000));
    const cut = shortened(long);
    expect(cut.length).toBeLessThan(4_200);
    expect(cut).toMatch(/…\[truncated: about \d+ more characters not shown\. Narrow the command/);
    expect(cut.endsWith('</external>')).toBe(true);
    const hidden = Number(/about (\d+)/.exec(cut)![1]);
    expect(hidden).toBe(long.length - 4_000);
    // What the executor had cut already counts too.
    expect(shortened(long, 19_000)).toContain(`about ${long.length - 4_000 + 19_000} more`);
  });
});
