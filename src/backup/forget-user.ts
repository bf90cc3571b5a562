import { lstat, readdir, rm } from 'node:fs/promises';
import type { Database } from '../db/index.ts';
import { StewardError } from '../errors.ts';
import { userVaultDir, withVaultLock } from '../files/index.ts';
import { filesRoot } from './backup.ts';
import { ownedSkills, removeOwnedSkills } from './owned-skills.ts';
import { quoteIdent, readCatalog } from './table-catalog.ts';
import { userDataPlan } from './user-data-plan.ts';

export type ForgetReport = {
  userId: string;
  /** Rows removed per table (tables with none left out). */
  rows: Array<{ table: string; rows: number }>;
  /** Files removed from their vault, every version included. */
  files: number;
  skills: string[];
  /** Tables the schema has that are neither a user's nor known as shared (reported, not touched). */
  unclassified: string[];
};

/** The owner runs the install: their data goes with the install, never by this command. */
export const OWNER_USER = 'local';

/**
 * Removes every row of `userId` in every table (derived from the schema, in one transaction),
 * their vault with every version, and the skill files they own. Refuses the owner, an unknown
 * user, and a user with a turn queued or running (it would write again).
 */
export async function forgetUser(
  deps: { database: Database; dataDir: string; skillsDir: string },
  userId: string,
): Promise<ForgetReport> {
  if (userId === OWNER_USER)
    throw new StewardError(
      'user_is_owner',
      `${OWNER_USER} is the owner of this Steward and cannot be deleted`,
    );
  const plan = userDataPlan(await readCatalog(deps.database));
  const known = await deps.database.query(`SELECT 1 FROM ${quoteIdent('users')} WHERE id = $1`, [userId]);
  if (known.length === 0) throw new StewardError('user_not_found', `there is no user ${userId}`);
  const busy = await deps.database.query(
    `SELECT 1 FROM ${quoteIdent('turns')} WHERE user_id = $1 AND status IN ('queued', 'running') LIMIT 1`,
    [userId],
  );
  if (busy.length > 0)
    throw new StewardError(
      'user_busy',
      `${userId} has a turn queued or running: try again once it has finished`,
    );
  const root = filesRoot(deps.dataDir);
  const vault = userVaultDir(root, userId);
  return withVaultLock(deps.database, root, userId, async () => {
    const rows = await deps.database.transaction(async (tx) => {
      const removed: Array<{ table: string; rows: number }> = [];
      for (const { table, condition } of plan.owned) {
        const result = await tx.query<{ n: number }>(
          `WITH gone AS (DELETE FROM ${quoteIdent(table.name)} WHERE ${condition} RETURNING 1) SELECT count(*)::int AS n FROM gone`,
          [userId],
        );
        const count = Number(result[0]?.n ?? 0);
        if (count > 0) removed.push({ table: table.name, rows: count });
      }
      return removed;
    });
    const files = await countFiles(vault);
    // Not a symbolic link followed: rm removes a link itself, never what it points to.
    await rm(vault, { recursive: true, force: true });
    const skills = await removeOwnedSkills(await ownedSkills(deps.skillsDir, userId));
    return { userId, rows, files, skills, unclassified: plan.unclassified };
  });
}

async function countFiles(dir: string): Promise<number> {
  if (!(await lstat(dir).catch(() => null))?.isDirectory()) return 0;
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile()).length;
}
