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
