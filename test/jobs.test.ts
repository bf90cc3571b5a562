import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite } from '../src/db/index.ts';
import { type JobFailure, PgBossQueue } from '../src/jobs/index.ts';
import { silentLogger } from '../src/logging/logger.ts';
import { backends, createTestDatabase, type TestDatabase } from './support/db.ts';

for (const backend of backends()) {
  describe(`job queue [${backend}]`, () => {
    let db: TestDatabase;
    let queue: PgBossQueue;
    const failures: JobFailure[] = [];
    beforeAll(async () => {
      db = await createTestDatabase(backend);
      queue = new PgBossQueue(db.database, silentLogger(), {
        onFailure: (failure) => failures.push(failure),
      });
    });
    afterAll(async () => {
      await queue.stop();
      await db.drop();
    });

    it('runs enqueued jobs on a started worker', async () => {
      const seen: number[] = [];
      await queue.register<{ n: number }>('test-basic', async (data) => {
        seen.push(data.n);
      });
      await queue.start();
      await queue.enqueue('test-basic', { n: 1 });
      await queue.enqueue('test-basic', { n: 2 });
      await expect.poll(() => [...seen].sort(), { timeout: 10_000 }).toEqual([1, 2]);
    });

    it('retries a failing job until it succeeds', async () => {
      let attempts = 0;
      await queue.register(
        'test-retry',
        async () => {
          attempts++;
          if (attempts < 3) throw new Error(`attempt ${attempts} failed`);
        },
        { retryLimit: 3, retryDelaySeconds: 1, retryBackoff: false },
      );
      await queue.enqueue('test-retry', {});
      await expect.poll(() => attempts, { timeout: 20_000, interval: 200 }).toBe(3);
    });

    it('reports each failed run, the last retry as final, and the queue depths', async () => {
      await queue.register(
        'test-doomed',
        async () => {
          throw new Error('always fails');
        },
        { retryLimit: 1, retryDelaySeconds: 1, retryBackoff: false },
      );
      await queue.start();
      await queue.enqueue('test-doomed', {});
      await expect
        .poll(() => failures.filter((failure) => failure.queue === 'test-doomed').length, {
          timeout: 20_000,
          interval: 200,
        })
        .toBe(2);
      const doomed = failures.filter((failure) => failure.queue === 'test-doomed');
      expect(doomed.map((failure) => [failure.final, failure.error])).toEqual([
        [false, 'always fails'],
        [true, 'always fails'],
      ]);
      const depths = await queue.depths();
      expect(depths.find((depth) => depth.queue === 'test-doomed')).toEqual({
        queue: 'test-doomed',
        ready: 0,
        active: 0,
        deferred: 0,
      });
    });

    it('keeps one queued job per singleton key', async () => {
      await queue.register('test-singleton', async () => {}, { singletonPerKey: true });
      const first = await queue.enqueue(
        'test-singleton',
        {},
        { singletonKey: 'conv-1', startAfterSeconds: 60 },
      );
      const second = await queue.enqueue(
        'test-singleton',
        {},
        { singletonKey: 'conv-1', startAfterSeconds: 60 },
      );
      const other = await queue.enqueue(
        'test-singleton',
        {},
        { singletonKey: 'conv-2', startAfterSeconds: 60 },
      );
      expect(first).toBeTruthy();
      expect(second).toBeNull();
      expect(other).toBeTruthy();
    });

    it('drains delayed jobs in this process when asked', async () => {
      const seen: string[] = [];
      await queue.register<{ id: string }>('test-drain', async (data) => {
        seen.push(data.id);
      });
      await queue.enqueue('test-drain', { id: 'later' }, { startAfterSeconds: 3_600 });
      expect(await queue.drain(['test-drain'])).toBe(1);
      expect(seen).toEqual(['later']);
    });

    it('stores cron schedules with their time zone', async () => {
      await queue.register('test-cron', async () => {});
      await queue.schedule('test-cron', '30 3 * * *', {}, 'Europe/Berlin');
      const rows = await db.database.query<{ cron: string; timezone: string }>(
        "SELECT cron, timezone FROM pgboss.schedule WHERE name = 'test-cron'",
      );
      expect(rows).toEqual([{ cron: '30 3 * * *', timezone: 'Europe/Berlin' }]);
    });
  });
}

describe('job queue on an embedded data dir', () => {
  it('runs a job enqueued before the process stopped after it starts again', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'steward-jobs-'));
    const first = await openPglite(dataDir);
    const before = new PgBossQueue(first, silentLogger());
    await before.register('test-restart', async () => {
      throw new Error('no worker should run in the first process');
    });
    await before.enqueue('test-restart', { note: 'survives' });
    await before.stop();
    await first.close();

    const second = await openPglite(dataDir);
    const after = new PgBossQueue(second, silentLogger());
    const seen: string[] = [];
    await after.register<{ note: string }>('test-restart', async (data) => {
      seen.push(data.note);
    });
    await after.start();
    await expect.poll(() => seen, { timeout: 10_000 }).toEqual(['survives']);
    await after.stop();
    await second.close();
  });
});
