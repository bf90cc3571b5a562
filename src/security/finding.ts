export const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** One problem `steward security audit` reports. `id` is stable kebab-case; no secret value is ever in it. */
export type Finding = {
  id: string;
  severity: Severity;
  message: string;
  fix: string;
  /** A safe fix Steward applies itself with `--fix` (a file mode, a missing folder); never printed as JSON. */
  repair?: { what: string; apply(): void };
};

export const severityRank = (severity: Severity): number => SEVERITIES.indexOf(severity);

/** High and critical findings make the audit exit non-zero. */
export const isSerious = (finding: Finding): boolean =>
  severityRank(finding.severity) >= severityRank('high');
