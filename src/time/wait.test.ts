import { describe, expect, it } from 'vitest';
import { waitUnlessAborted } from './wait.ts';

describe('waitUnlessAborted', () => {
  it('waits the time, or ends at once when stopped', async () => {
    const stop = new AbortController();
    let done = false;
    const waiting = waitUnlessAborted(60_000, stop.signal).then(() => {
      done = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(done).toBe(false);
    stop.abort();
    await waiting;
    expect(done).toBe(true);
    await waitUnlessAborted(60_000, stop.signal);
    await waitUnlessAborted(1, new AbortController().signal);
  });
});
