import { ProviderError } from '../../errors.ts';
import { plainSnippet, providerFailure, providerJson, type SearchHttp, shortDate } from './search-http.ts';
import type { WebSearchProvider, WebSearchQuery, WebSearchResult } from './search-types.ts';

const FRESHNESS = { day: 'pd', week: 'pw', month: 'pm' } as const;

/** Brave's Web Search API answer (the parts used): `web.results[]`. */
type BraveAnswer = {
  web?: {
    results?: Array<{
      title?: unknown;
      url?: unknown;
      description?: unknown;
      age?: unknown;
      page_age?: unknown;
    }>;
  };
};

/** Brave's error body: `{type: "ErrorResponse", error: {status, code, detail}}`. */
type BraveError = { error?: { code?: unknown; detail?: unknown } };

/**
 * Brave Search API (`GET {api_url}/web/search` with `X-Subscription-Token`). An invalid key
 * comes back as HTTP 401 or as 422 `SUBSCRIPTION_TOKEN_INVALID`; both say to fix
 * BRAVE_SEARCH_API_KEY.
 */
export class BraveSearch implements WebSearchProvider {
  readonly name = 'Brave Search';
  readonly #apiKey: string;
  readonly #apiUrl: string;
  readonly #http: SearchHttp;

  constructor(options: { apiKey: string; apiUrl: string; http: SearchHttp }) {
    this.#apiKey = options.apiKey;
    this.#apiUrl = options.apiUrl.replace(/\/+$/, '');
    this.#http = options.http;
  }

  async search(query: WebSearchQuery, signal: AbortSignal): Promise<WebSearchResult[]> {
    const params = new URLSearchParams({
      q: query.query,
      count: String(Math.min(query.limit, 20)),
      text_decorations: 'false',
    });
    if (query.freshness) params.set('freshness', FRESHNESS[query.freshness]);
    const answer = await providerJson<BraveAnswer & BraveError>(
      this.#http,
      this.name,
      `${this.#apiUrl}/web/search?${params}`,
      { accept: 'application/json', 'x-subscription-token': this.#apiKey },
      signal,
      (status, body) => this.#failure(status, body),
    );
    const results = answer.web?.results;
    if (results !== undefined && !Array.isArray(results))
      throw providerFailure(this.name, 'bad_response', 'web.results is not a list');
    return (results ?? [])
      .filter((result) => typeof result.url === 'string' && typeof result.title === 'string')
      .slice(0, query.limit)
      .map((result) => ({
        title: plainSnippet(String(result.title)),
        url: String(result.url),
        snippet: typeof result.description === 'string' ? plainSnippet(result.description) : '',
        ...dateOf(result.page_age, result.age),
      }));
  }

  #failure(status: number, body: BraveError | null): ProviderError | null {
    const code = typeof body?.error?.code === 'string' ? body.error.code : '';
    const detail = typeof body?.error?.detail === 'string' ? body.error.detail : '';
    if (status === 401 || status === 403 || code === 'SUBSCRIPTION_TOKEN_INVALID') {
      return new ProviderError(
        this.name,
        'auth',
        `Brave Search refused the API key (HTTP ${status}${code ? ` ${code}` : ''}${detail ? `: ${detail}` : ''}). Set BRAVE_SEARCH_API_KEY to a valid key from the Brave Search API dashboard; steward doctor checks it.`,
      );
    }
    if (status === 422 || status === 400) {
      return new ProviderError(
        this.name,
        'rejected',
        `Brave Search rejected the query (HTTP ${status}${detail ? `: ${detail}` : ''}). Use plain words, at most 400 characters.`,
      );
    }
    return null;
  }
}

function dateOf(pageAge: unknown, age: unknown): { date?: string } {
  const date = typeof pageAge === 'string' ? shortDate(pageAge) : null;
  if (date) return { date };
  return typeof age === 'string' && age.trim() ? { date: age.trim() } : {};
}
