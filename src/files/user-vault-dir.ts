import { createHash } from 'node:crypto';
import path from 'node:path';
import { StewardError } from '../errors.ts';
import { userIdProblem } from '../users/index.ts';

/**
 * The folder of a user's vault: `<files root>/<name>`, where the name is the user id written
 * as one path segment (`vaultDirName`). Every vault sits directly in the files root, so none
 * can lie inside another: `nest` and `nest/child` are `nest` and `nest%2Fchild`. Backup,
 * export and deletion find a user's files here. Throws for an invalid user id.
 */
export function userVaultDir(filesRoot: string, userId: string): string {
  return path.join(filesRoot, vaultDirName(userId));
}

/**
 * One user id → one folder name, never the same for two ids, even where the file system
 * ignores case: `/` becomes `%2F` and each capital letter gets a `^` before it
 * (`googlechat:users/777` → `googlechat:users%2F777`, `slack:U42` → `slack:^U42`). User ids
 * hold neither `%` nor `^`, so the mapping is one-to-one. A name past 255 bytes becomes `#`
 * and the SHA-256 of the id. Names starting with `.` in the files root are Steward's own.
 */
export function vaultDirName(userId: string): string {
  const problem = userIdProblem(userId);
  if (problem) throw new StewardError('invalid_user_id', problem);
  const name = userId.replace(/[/A-Z]/g, (char) => (char === '/' ? '%2F' : `^${char}`));
  return Buffer.byteLength(name) <= 255 ? name : `#${createHash('sha256').update(userId).digest('hex')}`;
}
