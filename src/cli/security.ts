import type { ResolvedConfig } from '../config/index.ts';
import { errorMessage } from '../errors.ts';
import { redactString } from '../logging/index.ts';
import { auditConfiguration, deepFindings, type Finding, isSerious, SEVERITIES } from '../security/index.ts';
import { CliExit, EXIT_ERROR, EXIT_OK } from './common.ts';
import { remoteServer } from './remote.ts';

export type SecurityAuditOptions = { json?: boolean; fix?: boolean; deep?: boolean };

/** Where the running server listens: the data dir's owner, else the configured host and port. */
function serverUrl(config: ResolvedConfig): string {
  const remote = remoteServer(config);
  if (remote) return remote.url;
  const host = ['0.0.0.0', '::', ''].includes(config.host) ? '127.0.0.1' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
}

/** Applies each finding's safe repair; returns a line per repair, and the findings left. */
function applyRepairs(findings: Finding[]): { lines: string[]; left: Finding[] } {
  const lines: string[] = [];
  const left: Finding[] = [];
  for (const finding of findings) {
    if (!finding.repair) {
      left.push(finding);
      continue;
    }
    try {
      finding.repair.apply();
      lines.push(`fixed: ${finding.repair.what}`);
    } catch (error) {
      lines.push(`could not ${finding.repair.what}: ${errorMessage(error)}`);
      left.push(finding);
    }
  }
  return { lines, left };
}

/**
 * `steward security audit [--json] [--fix] [--deep]`: prints every finding (JSON: `[{id,
 * severity, message, fix}]`) and exits 1 when any is high or critical, 0 otherwise. `--fix`
 * applies the safe fixes (file modes) first; `--deep` also asks the running server what a
 * stranger gets. Configuration errors exit 2 before this runs.
 */
export async function securityAuditCommand(
  config: ResolvedConfig,
  options: SecurityAuditOptions,
): Promise<never> {
  let found = auditConfiguration(config);
  const notes: string[] = [];
  if (options.fix) {
    const { lines, left } = applyRepairs(found);
    notes.push(...(lines.length ? lines : ['fixed: nothing needed a safe fix']));
    found = left;
  }
  if (options.deep) {
    const url = serverUrl(config);
    notes.push(`probed the running server at ${url}${config.public_url ? ` and ${config.public_url}` : ''}`);
    found.push(...(await deepFindings(config, url)));
  }
  const findings = found.map((finding) => ({
    // A check never puts a value in its text; this is the belt to that braces.
    id: finding.id,
    severity: finding.severity,
    message: redactString(finding.message, config.secrets),
    fix: redactString(finding.fix, config.secrets),
  }));
  if (options.json) process.stdout.write(`${JSON.stringify(findings, null, 2)}\n`);
  else {
    const head = notes.length ? `${notes.join('\n')}\n\n` : '';
    if (findings.length === 0) process.stdout.write(`${head}No findings.\n`);
    else {
      const lines = findings.flatMap((finding) => [
        `[${finding.severity}] ${finding.id}: ${finding.message}`,
        `    fix: ${finding.fix}`,
      ]);
      const counts = [...SEVERITIES]
        .reverse()
        .map(
          (severity) =>
            [severity, findings.filter((finding) => finding.severity === severity).length] as const,
        )
        .filter(([, count]) => count > 0)
        .map(([severity, count]) => `${count} ${severity}`);
      process.stdout.write(
        `${head}${lines.join('\n')}\n\n${findings.length} finding${findings.length === 1 ? '' : 's'}: ${counts.join(', ')}.\n`,
      );
    }
  }
  throw new CliExit(findings.some(isSerious) ? EXIT_ERROR : EXIT_OK);
}
