import { fileURLToPath } from 'node:url';
import type { ResolvedConfig } from '../config/index.ts';
import { channelFindings } from './audit-channels.ts';
import { configFileFindings, envFileFindings, fileFindings } from './audit-files.ts';
import { settingsFindings } from './audit-settings.ts';
import { type AdvisoryList, dependencyFindings } from './dependency-advisories.ts';
import { type Finding, severityRank } from './finding.ts';

const INSTALL_DIR = fileURLToPath(new URL('../../', import.meta.url));

export type AuditOptions = {
  /** Where Steward is installed: its package-lock.json / node_modules are checked. */
  installDir?: string;
  advisories?: AdvisoryList;
  /** Where `.env` is read from (default: the working directory). */
  cwd?: string;
};

/**
 * `steward security audit`: the loaded configuration checked the way a reviewer would —
 * exposure, tokens, channel webhook secrets, file permissions, secrets in steward.yaml, known
 * advisories in installed dependencies. Offline; never prints a secret value. Most severe first.
 */
export function auditConfiguration(config: ResolvedConfig, options: AuditOptions = {}): Finding[] {
  const findings = [
    ...settingsFindings(config),
    ...channelFindings(config),
    ...fileFindings(config),
    ...configFileFindings(config),
    ...envFileFindings(options.cwd ?? process.cwd()),
    ...dependencyFindings(options.installDir ?? INSTALL_DIR, options.advisories),
  ];
  const order = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return findings.sort(
    (a, b) =>
      severityRank(b.severity) - severityRank(a.severity) || order(a.id, b.id) || order(a.message, b.message),
  );
}
