/*
 * Every credential this process has decrypted or was configured with. Loggers consult it on
 * each record (see createRuntime), so a token that reaches a log line by accident is masked.
 */
const known = new Set<string>();

export function rememberSecrets(values: readonly string[]): void {
  for (const value of values) if (value.length >= 4) known.add(value);
}

/** The credential values to redact from logs, error reports and prompts. */
export function credentialSecrets(): string[] {
  return [...known];
}
