import {
  badResponse,
  type FailureContext,
  httpFailure,
  networkFailure,
  ProviderError,
} from '../provider-error.ts';

const REVOKED = /invalid_grant|unauthorized_client|invalid_client|Token has been expired or revoked/i;

type GaxiosLike = {
  status?: number;
  response?: {
    status?: number;
    data?: unknown;
    headers?: { get?(name: string): string | null } | Record<string, string>;
  };
  message?: string;
};

/**
 * Runs one Google API call and maps its failures to ProviderError: 401/403 → reconnect,
 * 404 → not_found, 429 → rate_limited (with Retry-After), 5xx and network → unavailable,
 * a body that is not a JSON object → bad_response.
 */
export async function googleCall<T>(context: FailureContext, call: () => Promise<{ data: T }>): Promise<T> {
  let data: T;
  try {
    data = (await call()).data;
  } catch (error) {
    if (error instanceof ProviderError) throw error;
    if ((error as Error).name === 'AbortError') throw error;
    const failure = error as GaxiosLike;
    const status = failure.status ?? failure.response?.status ?? null;
    const message = String(failure.message ?? '');
    // The token endpoint refusing the refresh token or the service account's grant (HTTP 400 or
    // 401): access was revoked or expired, whatever the status says.
    if (REVOKED.test(`${message} ${apiMessage(failure.response?.data)}`)) {
      throw httpFailure(context, 401, message, { cause: error });
    }
    if (status === null) {
      if (error instanceof SyntaxError) throw badResponse(context, error.message, error);
      throw networkFailure(context, error);
    }
    if (status >= 200 && status < 300)
      throw badResponse(context, String(failure.message ?? 'unreadable body'), error);
    throw httpFailure(context, status, apiMessage(failure.response?.data), {
      retryAfterSeconds: retryAfter(failure.response?.headers),
      cause: error,
    });
  }
  if (data === '' || data === undefined || data === null) return data;
  if (typeof data !== 'object')
    throw badResponse(context, `expected JSON, got: ${String(data).slice(0, 80)}`);
  return data;
}

function apiMessage(data: unknown): string {
  if (data && typeof data === 'object') {
    const error = (data as { error?: unknown }).error;
    if (typeof error === 'string') return error;
    if (error && typeof error === 'object') return String((error as { message?: unknown }).message ?? '');
  }
  return '';
}

function retryAfter(headers: NonNullable<GaxiosLike['response']>['headers']): number | null {
  if (!headers) return null;
  const raw =
    typeof (headers as { get?: unknown }).get === 'function'
      ? (headers as { get(name: string): string | null }).get('retry-after')
      : (headers as Record<string, string>)['retry-after'];
  const seconds = Number(raw);
  return Number.isFinite(seconds) && seconds > 0 ? Math.ceil(seconds) : null;
}
