import { errorMessage, ProviderError } from '../errors.ts';

export { ProviderError, type ProviderIssue } from '../errors.ts';

export type FailureContext = {
  /** Shown to the user: `Gmail`, `HubSpot`, `the IMAP server`. */
  provider: string;
  /** The command that restores access: `steward connect google`. */
  reconnect: string;
};

/** A ProviderError for an HTTP status (or null when the call did not get one). */
export function httpFailure(
  context: FailureContext,
  status: number | null,
  detail: string,
  options: { retryAfterSeconds?: number | null; cause?: unknown } = {},
): ProviderError {
  const { provider, reconnect } = context;
  const clean = detail.replace(/\s+/g, ' ').trim().slice(0, 300);
  if (status === 401 || status === 403) {
    return new ProviderError(
      provider,
      'auth',
      `${provider} refused the stored credentials (HTTP ${status}${clean ? `: ${clean}` : ''}): access was revoked or has expired. Reconnect with: ${reconnect}`,
      options,
    );
  }
  if (status === 404) {
    return new ProviderError(
      provider,
      'not_found',
      `${provider} has no such item${clean ? ` (${clean})` : ''}.`,
      options,
    );
  }
  if (status === 429) {
    const wait = options.retryAfterSeconds ? `${options.retryAfterSeconds} s` : 'a minute';
    return new ProviderError(
      provider,
      'rate_limited',
      `${provider} is rate-limiting requests (HTTP 429). Wait ${wait} before trying again; do not retry at once.`,
      options,
    );
  }
  if (status !== null && status >= 400 && status < 500) {
    return new ProviderError(
      provider,
      'rejected',
      `${provider} rejected the request (HTTP ${status})${clean ? `: ${clean}` : ''}. Check the values given.`,
      options,
    );
  }
  const what = status === null ? clean || 'no answer' : `HTTP ${status}${clean ? `: ${clean}` : ''}`;
  return new ProviderError(
    provider,
    'unavailable',
    `${provider} is unavailable (${what}). Try again in a few minutes; if it persists, tell the user ${provider} cannot be reached.`,
    options,
  );
}

/** The provider answered something that is not what its API returns. */
export function badResponse(context: FailureContext, detail: string, cause?: unknown): ProviderError {
  return new ProviderError(
    context.provider,
    'bad_response',
    `${context.provider} returned a response Steward could not read (${detail.slice(0, 200)}). Try again later; if it persists, check the configured ${context.provider} address.`,
    { cause },
  );
}

/** Network-level failures (refused, reset, DNS, timeout) as an `unavailable` ProviderError. */
export function networkFailure(context: FailureContext, error: unknown): ProviderError {
  const code = (error as { code?: unknown }).code;
  const detail = typeof code === 'string' ? `${code}: ${errorMessage(error)}` : errorMessage(error);
  return httpFailure(context, null, detail, { cause: error });
}
