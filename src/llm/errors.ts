import { StewardError } from '../errors.ts';
import type { LlmErrorClass } from './types.ts';

const RETRYABLE: ReadonlySet<LlmErrorClass> = new Set([
  'rate_limit',
  'provider_down',
  'timeout',
  'bad_response',
]);

export class LlmError extends StewardError {
  readonly errorClass: LlmErrorClass;
  readonly status: number | null;
  /** Seconds the provider asked us to wait (Retry-After), when it said. */
  readonly retryAfterSeconds: number | null;
  readonly model: string | null;
  constructor(
    errorClass: LlmErrorClass,
    message: string,
    options: {
      status?: number | null;
      retryAfterSeconds?: number | null;
      model?: string | null;
      cause?: unknown;
    } = {},
  ) {
    super(`llm_${errorClass}`, message, { cause: options.cause });
    this.name = 'LlmError';
    this.errorClass = errorClass;
    this.status = options.status ?? null;
    this.retryAfterSeconds = options.retryAfterSeconds ?? null;
    this.model = options.model ?? null;
  }

  get retryable(): boolean {
    return RETRYABLE.has(this.errorClass);
  }
}
