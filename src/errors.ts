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
  | 'signal_refused'
  | 'signal_unreadable_answer'
  | 'skill_name_invalid'
  | 'telegram_unreadable_answer'
  | 'turn_in_progress'
  | 'unsupported_audio'
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
  if (error instanceof Error) {
    const cause = isFetchFailure(error) ? networkCause(error.cause) : null;
    return cause ? `${error.message}: ${cause}` : error.message;
  }
  return String(error);
}

/** undici's `TypeError: fetch failed`, whose `cause` holds what actually went wrong. */
function isFetchFailure(error: Error): boolean {
  return error.message === 'fetch failed' && error.cause !== undefined;
}

const NETWORK_MEANING: Record<string, string> = {
  ECONNREFUSED: 'connection refused: nothing listens there',
  ECONNRESET: 'the connection was reset',
  ENOTFOUND: 'DNS: no such host name',
  EAI_AGAIN: 'DNS lookup failed for now',
  EHOSTUNREACH: 'no route to the host',
  ENETUNREACH: 'the network is unreachable',
  ETIMEDOUT: 'the connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'the connection timed out',
  UND_ERR_SOCKET: 'the connection closed early',
  UND_ERR_HEADERS_TIMEOUT: 'no answer in time',
};

const TLS_CODE = /^(CERT_|ERR_TLS_|ERR_SSL_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH|ERR_OSSL)/;

/**
 * One line for the low-level cause of a failed request, e.g. `ECONNREFUSED 127.0.0.1:4999
 * (connection refused: nothing listens there)`, `ENOTFOUND llm.example (DNS: no such host
 * name)` or `TLS CERT_HAS_EXPIRED: certificate has expired`. Null when nothing is known.
 */
export function networkCause(cause: unknown, depth = 0): string | null {
  if (!cause || typeof cause !== 'object' || depth > 4) return null;
  const errors = (cause as { errors?: unknown }).errors;
  if (Array.isArray(errors) && errors.length > 0) {
    // Happy eyeballs: one error per address tried.
    const each = [...new Set(errors.map((inner) => networkCause(inner, depth + 1)).filter(Boolean))];
    if (each.length) return each.join('; ');
  }
  const { code, address, port, hostname, message } = cause as {
    code?: unknown;
    address?: unknown;
    port?: unknown;
    hostname?: unknown;
    message?: unknown;
  };
  const text = typeof message === 'string' ? message : '';
  if (typeof code !== 'string') {
    const inner = networkCause((cause as { cause?: unknown }).cause, depth + 1);
    return inner ?? (text || null);
  }
  if (TLS_CODE.test(code)) {
    // OpenSSL's messages carry a routine path; the reason is the part people can read.
    const reason = /:error:[0-9A-F]+:[^:]*:[^:]*:([^:]+):/.exec(text)?.[1] ?? text;
    return `TLS ${code}${reason ? `: ${reason}` : ''}`;
  }
  const where =
    typeof address === 'string'
      ? ` ${address.includes(':') ? `[${address}]` : address}${port !== undefined ? `:${port}` : ''}`
      : typeof hostname === 'string'
        ? ` ${hostname}`
        : '';
  const meaning = NETWORK_MEANING[code];
  return `${code}${where}${meaning ? ` (${meaning})` : text && !where ? `: ${text}` : ''}`;
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
