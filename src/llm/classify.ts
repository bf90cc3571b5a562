import type { APIError } from 'openai';
import { errorMessage } from '../errors.ts';
import { redactString } from '../logging/index.ts';
import { LlmError } from './errors.ts';
import { loadedOpenAiSdk } from './openai-sdk.ts';
import type { LlmErrorClass } from './types.ts';

/** Wording providers use when the prompt does not fit the model (OpenAI, Anthropic, OpenRouter, vLLM, Ollama). */
const CONTEXT_LENGTH_PATTERN =
  /context[ _-]?(length|window)|maximum context|prompt is too long|too many tokens|input is too long|token limit|reduce the length/i;

export type AttemptState = {
  model: string;
  /** Secrets to scrub from every message (the API key). */
  secrets: readonly string[];
  /** The caller's signal fired: the user gave up, never retry. */
  callerAborted: boolean;
  /** Our own per-attempt deadline fired. */
  timedOut: boolean;
  timeoutMs: number;
};

/**
 * Seconds to wait from a Retry-After header: delta-seconds or an HTTP date. Also reads
 * `retry-after-ms`, which OpenAI sends. Null when absent or unreadable.
 */
export function parseRetryAfter(
  headers: Headers | null | undefined,
  nowMs: number = Date.now(),
): number | null {
  if (!headers) return null;
  const milliseconds = headers.get('retry-after-ms');
  if (milliseconds !== null && /^\d+(\.\d+)?$/.test(milliseconds.trim())) return Number(milliseconds) / 1000;
  const value = headers.get('retry-after')?.trim();
  if (!value) return null;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value);
  const date = Date.parse(value);
  if (Number.isNaN(date)) return null;
  return Math.max(0, (date - nowMs) / 1000);
}

/** The class of an HTTP failure, from its status and the provider's message. */
export function classifyStatus(status: number, message: string): LlmErrorClass {
  if (status === 401 || status === 403) return 'auth';
  if (status === 402) return 'credits';
  if (status === 429) return 'rate_limit';
  if (status === 408) return 'timeout';
  if (status === 413) return 'context_length';
  if (status === 400 && CONTEXT_LENGTH_PATTERN.test(message)) return 'context_length';
  if (status >= 500) return 'provider_down';
  if (status >= 400) return CONTEXT_LENGTH_PATTERN.test(message) ? 'context_length' : 'bad_request';
  return 'bad_response';
}

const ADVICE: Partial<Record<LlmErrorClass, string>> = {
  auth: 'The LLM endpoint rejected the API key; check OPENROUTER_API_KEY or LLM_API_KEY.',
  credits: 'The LLM account is out of credits; add credits at the provider.',
};

function providerMessage(error: APIError): string {
  const body: unknown = error.error;
  if (typeof body === 'object' && body !== null && 'message' in body && typeof body.message === 'string') {
    return body.message;
  }
  return error.message;
}

function statusOf(error: APIError): number | null {
  if (typeof error.status === 'number') return error.status;
  // Errors inside a stream (OpenRouter) carry the HTTP-like status as `error.code`.
  const body: unknown = error.error;
  if (typeof body === 'object' && body !== null && 'code' in body) {
    const code = Number(body.code);
    if (Number.isInteger(code) && code >= 400 && code < 600) return code;
  }
  return null;
}

/**
 * Turns whatever one attempt threw into an LlmError with a stable class. Messages name the
 * model and the provider's reason and never contain a secret. The SDK error is deliberately
 * not kept as `cause`: its message, headers and request may carry the key.
 */
export function toLlmError(error: unknown, state: AttemptState): LlmError {
  const scrub = (text: string) => redactString(text, state.secrets);
  const { model } = state;
  // SDK errors exist only once a call has loaded the SDK.
  const sdk = loadedOpenAiSdk();
  if (state.callerAborted) {
    return new LlmError('aborted', `The call to ${model} was cancelled`, { model });
  }
  if (state.timedOut || (sdk && error instanceof sdk.APIConnectionTimeoutError)) {
    return new LlmError('timeout', `${model} did not answer within ${state.timeoutMs} ms`, { model });
  }
  if (error instanceof LlmError) {
    return new LlmError(error.errorClass, scrub(error.message), {
      model,
      status: error.status,
      retryAfterSeconds: error.retryAfterSeconds,
    });
  }
  if (sdk && error instanceof sdk.APIUserAbortError) {
    // Aborted by a signal that was neither the caller's nor our deadline: treat as a dropped connection.
    return new LlmError('provider_down', `The request to ${model} was aborted`, { model });
  }
  if (sdk && error instanceof sdk.APIConnectionError) {
    const reason = error.cause ? errorMessage(error.cause) : error.message;
    return new LlmError('provider_down', scrub(`Could not reach the LLM endpoint for ${model}: ${reason}`), {
      model,
    });
  }
  if (sdk && error instanceof sdk.APIError) {
    const status = statusOf(error);
    const message = providerMessage(error);
    const errorClass = status === null ? 'bad_response' : classifyStatus(status, message);
    const retryAfterSeconds = parseRetryAfter(error.headers);
    const advice = ADVICE[errorClass];
    const text = `${model} failed${status === null ? '' : ` with HTTP ${status}`}: ${message}${advice ? ` ${advice}` : ''}`;
    return new LlmError(errorClass, scrub(text), { model, status, retryAfterSeconds });
  }
  if (error instanceof SyntaxError) {
    return new LlmError(
      'bad_response',
      scrub(`${model} sent a response that is not valid JSON: ${error.message}`),
      {
        model,
      },
    );
  }
  // fetch's own failures (socket closed mid-body, DNS) surface as TypeError and friends.
  return new LlmError('provider_down', scrub(`The call to ${model} failed: ${errorMessage(error)}`), {
    model,
  });
}
