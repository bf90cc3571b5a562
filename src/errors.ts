/**
 * Every code a StewardError can carry: a closed list, so a code is never a typo and a caller
 * can switch on it. Refusals of a message (REFUSALS) are the ones with an HTTP status.
 */
export type ErrorCode =
  | RefusalCode
  | `provider_${ProviderIssue}`
  | `llm_${LlmErrorCode}`
  | 'backup_damaged'
  | 'backup_newer_schema'
  | 'backup_not_found'
  | 'backup_schema_mismatch'
  | 'channels_not_started'
  | 'compaction_bad_json'
  | 'config_invalid'
  | 'corrupt_audio'
  | 'credentials_unreadable'
  | 'dag_duplicate_agent'
  | 'dag_invalid_concurrency'
  | 'data_dir_locked'
  | 'data_dir_unusable'
  | 'database_unreachable'
  | 'drive_failed'
  | 'embedding_invalid'
  | 'entity_id_exhausted'
  | 'export_dir_not_empty'
  | 'file_operation_failed'
  | 'invalid_user_id'
  | 'listen_failed'
  | 'matrix_refused'
  | 'matrix_unreadable_answer'
  | 'media_unavailable'
  | 'memory_id_exhausted'
  | 'memory_invalid'
  | 'memory_not_found'
  | 'migration_failed'
  | 'oauth_cancelled'
  | 'oauth_denied'
  | 'oauth_no_refresh_token'
  | 'oauth_timeout'
  | 'payload_too_large'
  | 'restore_backup_failed'
  | 'restore_target_in_use'
  | 'restore_target_not_empty'
  | 'service_account_invalid'
  | 'service_account_token'
  | 'service_account_token_unavailable'
  | 'service_account_unreadable'
  | 'skill_name_invalid'
  | 'telegram_unreadable_answer'
  | 'turn_in_progress'
  | 'upgrade_backup_failed'
  | 'user_busy'
  | 'user_is_owner'
  | 'user_not_found'
  | 'vault_conflict'
  | 'vector_unavailable';

/** LlmError's classes (`llm/types.ts` LlmErrorClass), as codes. */
type LlmErrorCode =
  | 'bad_request'
  | 'bad_response'
  | 'auth'
  | 'timeout'
  | 'credits'
  | 'rate_limit'
  | 'context_length'
  | 'provider_down'
  | 'not_configured'
  | 'aborted';

/**
 * Exceptions are for bugs and for infrastructure that is down. Expected failures (a bad
 * command, a failed sub-agent) are values. Every StewardError carries a stable `code`.
 */
export class StewardError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StewardError';
    this.code = code;
  }
}

/**
 * Why a message was refused instead of run as a turn, and the one HTTP answer each gets. Every
 * surface maps a refusal through this table (its wire format aside); nothing else is a refusal.
 */
export const REFUSALS = {
  invalid_message: { status: 400, error: 'bad_request' },
  conversation_not_found: { status: 404, error: 'not_found' },
  rate_limited: { status: 429, error: 'rate_limited' },
  shutting_down: { status: 503, error: 'unavailable' },
} as const;

export type RefusalCode = keyof typeof REFUSALS;

/** A message the engine (or its front door) would not take. The message says how to fix it. */
export class RefusedError extends StewardError {
  declare readonly code: RefusalCode;
  /** Send again after this many seconds (rate limits). */
  readonly retryAfterSeconds: number | null;
  constructor(code: RefusalCode, message: string, options: { retryAfterSeconds?: number } = {}) {
    super(code, message);
    this.name = 'RefusedError';
    this.retryAfterSeconds = options.retryAfterSeconds ?? null;
  }

  get status(): (typeof REFUSALS)[RefusalCode]['status'] {
    return REFUSALS[this.code].status;
  }

  /** The `error` label of Steward's JSON error bodies. */
  get label(): (typeof REFUSALS)[RefusalCode]['error'] {
    return REFUSALS[this.code].error;
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
