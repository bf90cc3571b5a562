/** How recent results must be. */
export type Freshness = 'day' | 'week' | 'month';

export type WebSearchQuery = { query: string; limit: number; freshness?: Freshness };

/** One result, as the provider gave it (all of it is outside text). */
export type WebSearchResult = {
  title: string;
  url: string;
  snippet: string;
  /** When the page was published or last changed, where the provider says (`2026-01-05` or `2 days ago`). */
  date?: string;
};

/**
 * A web search engine. `search` returns at most `limit` results, best first. Failures are
 * ProviderErrors: `auth`/`rejected` for the configuration or the query (error results), and
 * `unavailable`/`rate_limited`/`bad_response` for the provider itself (they count toward the
 * circuit breaker). Must honour `signal`.
 */
export interface WebSearchProvider {
  /** Shown to the user: `Brave Search`, `SearXNG at http://…`. */
  readonly name: string;
  search(query: WebSearchQuery, signal: AbortSignal): Promise<WebSearchResult[]>;
}
