import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { migrate, openPglite } from '../db/index.ts';
import { PgBossQueue } from '../jobs/index.ts';
import { silentLogger } from '../logging/index.ts';
import { listBackups } from './backup-files.ts';
import { BACKUP_JOB, backupAge, registerBackupJobs } from './backup-schedule.ts';

const backup = (iso: string) => ({
  file: `/data/backups/${iso}.tar.gz`,
  at: new Date(iso),
  reason: 'scheduled' as const,
  bytes: 1,
});

describe('backupAge', () => {
  const now = new Date('2026-11-27T12:00:00Z');
  it('shows the age, and fails once a scheduled time passed more than an hour ago with no backup since', () => {
    expect(
      backupAge(backup('2026-11-27T03:00:05Z'), { schedule: '0 3 * * *', keep: 7 }, 'UTC', now),
    ).toMatchObject({
      ok: true,
      detail: expect.stringMatching(/^last backup 9 hour\(s\) old .*schedule "0 3 \* \* \*", keeping 7$/),
    });
    expect(
      backupAge(backup('2026-11-25T03:00:05Z'), { schedule: '0 3 * * *', keep: 7 }, 'UTC', now),
    ).toMatchObject({
      ok: false,
      detail: expect.stringContaining(
        'older than backup.schedule "0 3 * * *" allows (missed 2026-11-26T03:00:00.000Z)',
      ),
    });
    // Due 30 minutes ago: still within the hour a backup may take.
    expect(
      backupAge(backup('2026-11-26T11:30:05Z'), { schedule: '30 11 * * *', keep: 7 }, 'UTC', now).ok,
    ).toBe(true);
  });

  it('without a schedule only notes the age; a bad cron is a failure', () => {
    expect(backupAge(null, { keep: 7 }, 'UTC', now)).toMatchObject({ ok: true, detail: 'no backup yet' });
    expect(backupAge(null, { schedule: '0 3 * *', keep: 7 }, 'UTC', now)).toMatchObject({
      ok: false,
      detail: expect.stringContaining('not 5'),
    });
  });
});

describe('scheduled backups', () => {
  it('registers the cron on the job queue and writes a kept backup when the job runs', async () => {
    const database = await openPglite(null);
    await migrate(database);
    const jobs = new PgBossQueue(database, silentLogger());
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'steward-scheduled-'));
    let settings: { schedule?: string; keep: number } = { schedule: '15 2 * * *', keep: 1 };
    try {
      await registerBackupJobs({
        database,
        jobs,
        dataDir,
        skillsDir: path.join(dataDir, 'skills'),
        settings: () => settings,
        timezone: 'Europe/Paris',
        logger: silentLogger(),
      });
      for (let run = 0; run < 2; run++) {
        await jobs.enqueue(BACKUP_JOB, {});
        // pg-boss stores the schedules given before it started when it starts (here on the
        // first enqueue; in the server, when the queue starts).
        expect(
          await database.query('SELECT cron, timezone FROM pgboss.schedule WHERE name = $1', [BACKUP_JOB]),
        ).toEqual([{ cron: '15 2 * * *', timezone: 'Europe/Paris' }]);
        expect(await jobs.drain([BACKUP_JOB])).toBe(1);
      }
      expect((await listBackups(dataDir)).map((item) => item.reason)).toEqual(['scheduled']);
      settings = { keep: 1 };
      await jobs.enqueue(BACKUP_JOB, {});
      await jobs.drain([BACKUP_JOB]);
      expect(await listBackups(dataDir)).toHaveLength(1);
    } finally {
      await jobs.stop();
      await database.close();
    }
  }, 60_000);
});
