import type { Database } from '../db/index.ts';
import type { JobQueue } from '../jobs/index.ts';
import type { Logger } from '../logging/index.ts';
import { userIdProblem } from '../users/index.ts';
import { indexSkillPages, indexVault, type SkillPage } from './content-index.ts';
import { userVaultDir } from './user-vault-dir.ts';
import { VaultFs } from './vault-fs.ts';
import { vaultOwners } from './vault-layout.ts';

export const FILES_INDEX_JOB = 'files.index';
export const SKILLS_INDEX_JOB = 'files.index_skills';
export const FILES_RECONCILE_JOB = 'files.reconcile';

export type FileJobDeps = {
  database: Database;
  jobs: JobQueue;
  /** `<data dir>/files` */
  filesDir: string;
  maxIndexBytes: () => number;
  skillPages: () => SkillPage[];
  logger: Logger;
  /** Long-running processes also index the skill pages and reconcile every vault on a schedule. */
  background: boolean;
};

/**
 * Registers the content index's jobs: one user's vault (queued after every change, one
 * queued per user), the skill pages, and a reconcile pass every five minutes that catches
 * files changed outside Steward.
 */
export async function registerFileJobs(deps: FileJobDeps): Promise<void> {
  const { database, jobs, logger } = deps;
  await jobs.register<{ userId: string }>(
    FILES_INDEX_JOB,
    async (data, context) => {
      if (userIdProblem(data.userId)) return;
      const fs = new VaultFs(userVaultDir(deps.filesDir, data.userId));
      const report = await indexVault(database, data.userId, fs, {
        maxBytes: deps.maxIndexBytes(),
        signal: context.signal,
      });
      if (report.limited)
        logger.warn(
          { userId: data.userId, limit: report.limited },
          'the vault is larger or deeper than the index walks: files past the bound are not searchable',
        );
      if (report.indexed || report.removed) logger.debug({ userId: data.userId, ...report }, 'files indexed');
    },
    { retryLimit: 3, retryDelaySeconds: 5, singletonPerKey: true, expireInSeconds: 600 },
  );
  // One-shot commands only ever queue (and drain) the index job: the rest would cost them start-up time.
  if (!deps.background) return;
  await jobs.register(
    SKILLS_INDEX_JOB,
    async () => {
      const report = await indexSkillPages(database, deps.skillPages());
      if (report.indexed || report.removed) logger.debug(report, 'skill pages indexed');
    },
    { retryLimit: 3, singletonPerKey: true },
  );
  await jobs.register(FILES_RECONCILE_JOB, async () => {
    for (const userId of (await vaultOwners(database, deps.filesDir)).values())
      await enqueueIndex(jobs, userId);
    await jobs.enqueue(SKILLS_INDEX_JOB, {}, { singletonKey: 'skills' });
  });
  await jobs.schedule(FILES_RECONCILE_JOB, '*/5 * * * *', {}, 'UTC');
}

/** Queues the re-index of one user's vault (at most one waiting per user). */
export async function enqueueIndex(jobs: JobQueue, userId: string): Promise<void> {
  await jobs.enqueue(FILES_INDEX_JOB, { userId }, { singletonKey: userId });
}
