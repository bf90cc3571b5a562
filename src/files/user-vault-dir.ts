import path from 'node:path';

/**
 * The folder that holds one user's vault (their files and `.archive` of versions) under the
 * files root `<data dir>/files`. Everything that finds a user's files on disk asks this.
 */
export function userVaultDir(filesRoot: string, userId: string): string {
  return path.join(filesRoot, userId);
}
