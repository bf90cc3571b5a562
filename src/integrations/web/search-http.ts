import { errorMessage, ProviderError, type ProviderIssue } from '../../errors.ts';

/** How search providers reach their API: an injectable `fetch` and the time one call may take. */
export type SearchHttp = { fetch: typeof fetch; timeoutMs: number };

/** A ProviderError worded for a search engine (what happened, and what to do about it). */
export function providerFailure(
  provider: string,
  issue: Extract<ProviderIssue, 'unavailable' | 'rate_limited' | 'bad_response'>,
  detail: string,
  cause?: unknown,
): ProviderError {
  const clean = detail.replace(/\s+/g, ' ').trim().slice(0, 300);
  const message =
    issue === 'rate_limited'
      ? `${provider} is rate-limiting searches (${clean}). Wait before searching again; do not retry at once.`
      : issue === 'bad_response'
        ? `${provider} returned an answer Steward could not read (${clean}). Try again later; if it persists, check the configured address (steward doctor).`
        : `${provider} is unavailable (${clean}). Try again in a few minutes; if it persists, tell the user web search cannot be reached.`;
  return new ProviderError(provider, issue, message, { cause });
}

/**
 * GETs a provider's JSON API within `http.timeoutMs`. `specific` maps the provider's own error
 * answers (a refused key, a refused query); anything else that is not a 2xx, a network failure
 * or a body that is not a JSON object becomes an infrastructure ProviderError.
 */
export async function providerJson<T>(
  http: SearchHttp,
  provider: string,
  url: string,
  headers: Record<string, string>,
  signal: AbortSignal,
  specific: (status: number, body: T | null) => ProviderError | null,
): Promise<T> {
  const timeout = AbortSignal.timeout(http.timeoutMs);
  const failed = (error: unknown): ProviderError => {
    if (signal.aborted) throw error;
    if (timeout.aborted)
      return providerFailure(provider, 'unavailable', `no answer within ${http.timeoutMs / 1000} s`);
    const code = (error as { cause?: { code?: unknown } }).cause?.code;
    const message = errorMessage(error);
    const prefix = typeof code === 'string' && !message.includes(code) ? `${code}: ` : '';
    return providerFailure(provider, 'unavailable', `${prefix}${message}`, error);
  };
  let response: Response;
  let text: string;
  try {
    response = await http.fetch(url, { headers, signal: AbortSignal.any([signal, timeout]) });
    text = await response.text();
  } catch (error) {
    throw failed(error);
  }
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    body = null;
  }
  const object = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as T) : null;
  if (!response.ok) {
    const mapped = specific(response.status, object);
    if (mapped) throw mapped;
    if (response.status === 429) {
      const after = response.headers.get('retry-after');
      throw providerFailure(provider, 'rate_limited', `HTTP 429${after ? `, retry after ${after} s` : ''}`);
    }
    throw providerFailure(provider, 'unavailable', `HTTP ${response.status}: ${text.slice(0, 200)}`);
  }
  if (object === null)
    throw providerFailure(provider, 'bad_response', `not a JSON object: ${text.slice(0, 100)}`);
  return object;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** A snippet as plain text: highlight tags dropped, character references decoded, spaces collapsed. */
export function plainSnippet(text: string): string {
  return text
    .replace(/<\/?(strong|b|em|i|mark|span)\b[^>]*>/gi, '')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
      if (name.startsWith('#x') || name.startsWith('#X'))
        return safeCodePoint(Number.parseInt(name.slice(2), 16), whole);
      if (name.startsWith('#')) return safeCodePoint(Number(name.slice(1)), whole);
      return ENTITIES[name.toLowerCase()] ?? whole;
    })
    .replace(/\s+/g, ' ')
    .trim();
}

function safeCodePoint(code: number, fallback: string): string {
  return Number.isInteger(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : fallback;
}

/** `2025-04-12T14:22:41` (or any date Date can read) → `2025-04-12`; null when it is not a date. */
export function shortDate(value: string): string | null {
  const match = /^(\d{4}-\d{2}-\d{2})/.exec(value.trim());
  if (match) return match[1]!;
  const parsed = new Date(value);
  return Number.isNaN(parsed.getTime()) ? null : parsed.toISOString().slice(0, 10);
}
