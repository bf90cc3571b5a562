import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { ResolvedConfig } from '../config/index.ts';
import { errorMessage } from '../errors.ts';
import { auditConfiguration } from '../security/index.ts';

/** Folders Steward needs; a missing one is made private to this user. */
function missingFolders(config: ResolvedConfig): string[] {
  const folders = [config.dataDir, path.join(config.dataDir, 'logs'), config.skillsDir];
  return folders.filter((folder) => {
    try {
      statSync(folder);
      return false;
    } catch {
      return true;
    }
  });
}

/**
 * The fixes that cannot lose anything: missing folders made (0700), and the file modes the
 * security audit finds too open (`.env`, the data dir, key files) tightened. Returns one line
 * per fix, a failed one saying why.
 */
export function applySafeFixes(config: ResolvedConfig, cwd = process.cwd()): string[] {
  const lines: string[] = [];
  const attempt = (what: string, apply: () => void) => {
    try {
      apply();
      lines.push(what);
    } catch (error) {
      lines.push(`could not ${what}: ${errorMessage(error)}`);
    }
  };
  for (const folder of missingFolders(config))
    attempt(`made the folder ${folder}`, () => mkdirSync(folder, { recursive: true, mode: 0o700 }));
  for (const finding of auditConfiguration(config, { cwd })) {
    if (finding.repair) attempt(finding.repair.what, finding.repair.apply);
  }
  return lines;
}
