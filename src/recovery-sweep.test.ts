import { afterEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from './logging/logger.ts';
import { startRecoverySweep } from './recovery-sweep.ts';

function parts() {
  const calls: string[] = [];
  const engine = {
    accepting: true,
    recoverInterrupted: async () => {
      calls.push('turns');
      return 0;
    },
  };
  const channels = {
    sweep: async () => {
      calls.push('chats');
    },
  };
  return { calls, engine, channels, logger: silentLogger() };
}

describe('the recovery sweep', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('recovers turns at once, then turns and lost chat jobs on every pass, until stopped', async () => {
    vi.useFakeTimers();
    const sweep = parts();
    const stop = startRecoverySweep(sweep, 1_000);
    await vi.advanceTimersByTimeAsync(0);
    // At start the channels queued every open message themselves.
    expect(sweep.calls).toEqual(['turns']);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(sweep.calls).toEqual(['turns', 'turns', 'chats']);
    stop();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(sweep.calls).toHaveLength(3);
  });

  it('leaves everything alone once the engine is shutting down', async () => {
    vi.useFakeTimers();
    const sweep = parts();
    const stop = startRecoverySweep(sweep, 1_000);
    await vi.advanceTimersByTimeAsync(0);
    sweep.engine.accepting = false;
    await vi.advanceTimersByTimeAsync(3_000);
    expect(sweep.calls).toEqual(['turns']);
    stop();
  });

  it('still sweeps the chats when recovering turns failed', async () => {
    vi.useFakeTimers();
    const sweep = parts();
    sweep.engine.recoverInterrupted = async () => {
      sweep.calls.push('turns failed');
      throw new Error('database down');
    };
    const stop = startRecoverySweep(sweep, 1_000);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(sweep.calls).toEqual(['turns failed', 'turns failed', 'chats']);
    stop();
  });
});
