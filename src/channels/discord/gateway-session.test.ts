import { describe, expect, it } from 'vitest';
import { type CursorStore, memoryCursors } from '../cursor-store.ts';
import { GatewaySession } from './gateway-session.ts';

const info = (sessionId: string, sequence: number) => ({
  sessionId,
  sequence,
  resumeURL: 'wss://resume.example',
  shardId: 0,
  shardCount: 1,
});

describe('GatewaySession', () => {
  it('hands back the last handled sequence, not the last received, and keeps it across runs', async () => {
    const cursors = memoryCursors();
    const session = new GatewaySession(cursors, null);
    await session.load();
    await session.update(info('s1', 1)); // READY
    await session.update(info('s1', 5)); // the library saw event 5 arrive
    expect(session.retrieve()).toMatchObject({ sessionId: 's1', sequence: 1 });
    await session.handled(3, true);
    expect(session.retrieve()!.sequence).toBe(3);
    session.botUserId = '118';
    await session.handled(4, true);

    const again = new GatewaySession(cursors, null);
    await again.load();
    expect(again.retrieve()).toMatchObject({
      sessionId: 's1',
      sequence: 4,
      resumeURL: 'wss://resume.example',
    });
    expect(again.botUserId).toBe('118');
  });

  it('forgets an invalid session, but not when the close was its own (stopping)', async () => {
    const session = new GatewaySession(memoryCursors(), null);
    await session.update(info('s1', 1));
    session.keepOnClose = true;
    await session.update(null);
    expect(session.retrieve()).not.toBeNull();
    session.keepOnClose = false;
    await session.update(null);
    expect(session.retrieve()).toBeNull();
  });

  it('never throws to the library when the database is down', async () => {
    const down: CursorStore = {
      get: async () => null,
      set: async () => {
        throw new Error('database down');
      },
    };
    const session = new GatewaySession(down, null);
    await expect(session.update(info('s1', 1))).resolves.toBeUndefined();
    await expect(session.update(null)).resolves.toBeUndefined();
    await session.update(info('s2', 1));
    await expect(session.handled(2, true)).rejects.toThrow('database down');
    expect(session.retrieve()!.sequence).toBe(2);
  });
});
