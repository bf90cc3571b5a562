import type { ResolvedConfig } from '../config/index.ts';
import { redactString } from '../logging/index.ts';
import { auditConfiguration, isSerious, SEVERITIES } from '../security/index.ts';
import { CliExit, EXIT_ERROR, EXIT_OK } from './common.ts';

/**
 * `steward security audit [--json]`: prints every finding (JSON: `[{id, severity, message,
 * fix}]`) and exits 1 when any is high or critical, 0 otherwise. Configuration errors exit 2
 * before this runs.
 */
export function securityAuditCommand(config: ResolvedConfig, options: { json?: boolean }): never {
  const findings = auditConfiguration(config).map((finding) => ({
    // A check never puts a value in its text; this is the belt to that braces.
    id: finding.id,
    severity: finding.severity,
    message: redactString(finding.message, config.secrets),
    fix: redactString(finding.fix, config.secrets),
  }));
  if (options.json) process.stdout.write(`${JSON.stringify(findings, null, 2)}\n`);
  else if (findings.length === 0) process.stdout.write('No findings.\n');
  else {
    const lines = findings.flatMap((finding) => [
      `[${finding.severity}] ${finding.id}: ${finding.message}`,
      `    fix: ${finding.fix}`,
    ]);
    const counts = [...SEVERITIES]
      .reverse()
      .map(
        (severity) => [severity, findings.filter((finding) => finding.severity === severity).length] as const,
      )
      .filter(([, count]) => count > 0)
      .map(([severity, count]) => `${count} ${severity}`);
    process.stdout.write(
      `${lines.join('\n')}\n\n${findings.length} finding${findings.length === 1 ? '' : 's'}: ${counts.join(', ')}.\n`,
    );
  }
  throw new CliExit(findings.some(isSerious) ? EXIT_ERROR : EXIT_OK);
}
