/**
 * Exceptions are for bugs and for infrastructure that is down. Expected failures (a bad
 * command, a failed sub-agent) are values. Every StewardError carries a stable `code`.
 */
export class StewardError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StewardError';
    this.code = code;
  }
}

/** A setting is missing or invalid. `key` names it the way the user writes it. */
export class ConfigError extends StewardError {
  readonly key: string;
  constructor(key: string, message: string, options?: { cause?: unknown }) {
    super('config_invalid', `${key}: ${message}`, options);
    this.name = 'ConfigError';
    this.key = key;
  }
}

/** The embedded data dir is owned by another live process. */
export class DataDirLockedError extends StewardError {
  readonly ownerPid: number;
  readonly ownerPort: number | null;
  constructor(dataDir: string, ownerPid: number, ownerPort: number | null) {
    const where = ownerPort ? ` serving on port ${ownerPort}` : '';
    super(
      'data_dir_locked',
      `The data dir ${dataDir} is in use by Steward process ${ownerPid}${where}. ` +
        'Stop that process, or point STEWARD_DATA_DIR (or DATABASE_URL) elsewhere.',
    );
    this.name = 'DataDirLockedError';
    this.ownerPid = ownerPid;
    this.ownerPort = ownerPort;
  }
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

/**
 * What went wrong at a provider. `unavailable`, `rate_limited` and `bad_response` are the
 * provider's own failures (they count toward circuit breakers); `auth`, `not_found` and
 * `rejected` concern this user's account or input and become error results.
 */
export type ProviderIssue =
  | 'unavailable'
  | 'rate_limited'
  | 'bad_response'
  | 'auth'
  | 'not_found'
  | 'rejected';

/** A provider call failed. The message names the provider and what to do; it never holds a secret. */
export class ProviderError extends StewardError {
  readonly provider: string;
  readonly issue: ProviderIssue;
  constructor(provider: string, issue: ProviderIssue, message: string, options?: { cause?: unknown }) {
    super(`provider_${issue}`, message, options);
    this.name = 'ProviderError';
    this.provider = provider;
    this.issue = issue;
  }

  /** The provider itself is failing (down, throttling, garbage), as opposed to this user's input or account. */
  get infrastructure(): boolean {
    return this.issue === 'unavailable' || this.issue === 'rate_limited' || this.issue === 'bad_response';
  }
}
