import { stewardCommand } from '../config/index.ts';
import type { Database } from '../db/index.ts';
import { errorMessage } from '../errors.ts';
import type { JobQueue } from '../jobs/index.ts';
import type { Logger } from '../logging/index.ts';
import { fireTimesBetween, parseCron } from '../skills/index.ts';
import type { StoredBackup } from './backup-files.ts';
import { writeKeptBackup } from './backup-files.ts';
import { stewardVersion } from './steward-version.ts';

export const BACKUP_JOB = 'backup.scheduled';

export type BackupSettings = { schedule?: string; keep: number };

export type BackupJobDeps = {
  database: Database;
  jobs: JobQueue;
  dataDir: string;
  skillsDir: string;
  settings: () => BackupSettings;
  timezone: string;
  logger: Logger;
};

/**
 * Registers the scheduled backup: a job on the queue's cron (`backup.schedule`, in the server's
 * zone) that writes `<data dir>/backups/steward-backup-…-scheduled.tar.gz` and prunes to
 * `backup.keep`. The job reads the settings when it runs: with the schedule unset it does
 * nothing. Call `reschedule` when the settings change.
 */
export async function registerBackupJobs(deps: BackupJobDeps): Promise<{ reschedule(): Promise<void> }> {
  await deps.jobs.register(
    BACKUP_JOB,
    async () => {
      const settings = deps.settings();
      if (!settings.schedule) return;
      const result = await writeKeptBackup(
        {
          database: deps.database,
          dataDir: deps.dataDir,
          skillsDir: deps.skillsDir,
          stewardVersion: stewardVersion(),
        },
        'scheduled',
        settings.keep,
      );
      deps.logger.info(
        { file: result.file, bytes: result.bytes, pruned: result.pruned.length },
        'scheduled backup written',
      );
    },
    { retryLimit: 2, retryDelaySeconds: 60, expireInSeconds: 3600, singletonPerKey: true },
  );
  const reschedule = async () => {
    const { schedule } = deps.settings();
    if (!schedule) return;
    const parsed = parseCron(schedule);
    if (!parsed.ok) {
      deps.logger.error(`backup.schedule: ${parsed.problem}; no scheduled backups until it is fixed`);
      return;
    }
    await deps.jobs
      .schedule(BACKUP_JOB, parsed.cron.expression, {}, deps.timezone)
      .catch((error) =>
        deps.logger.error({ err: error }, `backup.schedule not applied: ${errorMessage(error)}`),
      );
  };
  await reschedule();
  return { reschedule };
}

export type BackupAge = { ok: boolean; detail: string; fix?: string };

/** Slack before a scheduled time without a backup after it counts as missed (the backup itself takes time). */
const GRACE_MS = 60 * 60 * 1000;

/**
 * What `doctor` says of the latest backup: its age, and whether the schedule allows it — a
 * scheduled time more than an hour old with no backup since it is a failure.
 */
export function backupAge(
  latest: StoredBackup | null,
  settings: BackupSettings,
  timezone: string,
  now: Date,
): BackupAge {
  const age = latest ? `${describeAge(now.getTime() - latest.at.getTime())} old (${latest.file})` : null;
  if (!settings.schedule) {
    return latest
      ? {
          ok: true,
          detail: `last backup ${age}; no schedule`,
          fix: 'set backup.schedule (e.g. "0 3 * * *") for regular backups',
        }
      : {
          ok: true,
          detail: 'no backup yet',
          fix: `run ${stewardCommand()} backup --output FILE, or set backup.schedule (e.g. "0 3 * * *")`,
        };
  }
  const parsed = parseCron(settings.schedule);
  if (!parsed.ok)
    return { ok: false, detail: `backup.schedule: ${parsed.problem}`, fix: 'correct backup.schedule' };
  const since = latest ? latest.at.getTime() : now.getTime() - 7 * 24 * 3600 * 1000;
  const missed = fireTimesBetween(parsed.cron, timezone, since + 1, now.getTime() - GRACE_MS, 2);
  if (missed.length > 0 && latest)
    return {
      ok: false,
      detail: `last backup ${age}: older than backup.schedule "${settings.schedule}" allows (missed ${missed[0]!.toISOString()})`,
      fix: `see the server's log (${stewardCommand()} logs) for why the scheduled backup failed; ${stewardCommand()} backup makes one now`,
    };
  if (!latest)
    return missed.length > 0
      ? {
          ok: false,
          detail: `no backup yet, though backup.schedule "${settings.schedule}" has come due`,
          fix: `see the server's log (${stewardCommand()} logs); ${stewardCommand()} backup makes one now`,
        }
      : { ok: true, detail: `no backup yet; the first runs on "${settings.schedule}"` };
  return {
    ok: true,
    detail: `last backup ${age}; schedule "${settings.schedule}", keeping ${settings.keep}`,
  };
}

function describeAge(ms: number): string {
  const minutes = Math.max(0, Math.round(ms / 60_000));
  if (minutes < 120) return `${minutes} minute(s)`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} hour(s)`;
  return `${Math.round(hours / 24)} day(s)`;
}
