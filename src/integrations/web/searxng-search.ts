import { ProviderError } from '../../errors.ts';
import { plainSnippet, providerFailure, providerJson, type SearchHttp, shortDate } from './search-http.ts';
import type { WebSearchProvider, WebSearchQuery, WebSearchResult } from './search-types.ts';

/** SearXNG's JSON answer (the parts used). */
type SearxngAnswer = {
  results?: Array<{ title?: unknown; url?: unknown; content?: unknown; publishedDate?: unknown }>;
};

/**
 * A self-hosted SearXNG through its JSON API (`GET {url}/search?q=…&format=json`). The
 * instance must allow the json format (`search.formats` in its settings.yml); one that does not
 * answers 403, and the error says so. A user name and password in SEARXNG_URL are sent as Basic
 * authentication (for an instance behind a proxy), never shown.
 */
export class SearxngSearch implements WebSearchProvider {
  readonly name: string;
  readonly #base: string;
  readonly #authorization: string | null;
  readonly #http: SearchHttp;

  constructor(options: { url: string; http: SearchHttp }) {
    const url = new URL(options.url);
    this.#authorization =
      url.username || url.password
        ? `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`
        : null;
    url.username = '';
    url.password = '';
    this.#base = url.href.replace(/\/+$/, '');
    this.name = `SearXNG at ${this.#base}`;
    this.#http = options.http;
  }

  async search(query: WebSearchQuery, signal: AbortSignal): Promise<WebSearchResult[]> {
    const params = new URLSearchParams({ q: query.query, format: 'json' });
    if (query.freshness) params.set('time_range', query.freshness);
    const answer = await providerJson<SearxngAnswer>(
      this.#http,
      this.name,
      `${this.#base}/search?${params}`,
      { accept: 'application/json', ...(this.#authorization ? { authorization: this.#authorization } : {}) },
      signal,
      (status) => this.#failure(status),
    );
    if (answer.results !== undefined && !Array.isArray(answer.results))
      throw providerFailure(this.name, 'bad_response', 'results is not a list');
    const seen = new Set<string>();
    const results: WebSearchResult[] = [];
    for (const result of answer.results ?? []) {
      if (typeof result.url !== 'string' || seen.has(result.url)) continue;
      seen.add(result.url);
      const date = typeof result.publishedDate === 'string' ? shortDate(result.publishedDate) : null;
      results.push({
        title:
          typeof result.title === 'string' && result.title.trim() ? plainSnippet(result.title) : result.url,
        url: result.url,
        snippet: typeof result.content === 'string' ? plainSnippet(result.content) : '',
        ...(date ? { date } : {}),
      });
      if (results.length >= query.limit) break;
    }
    return results;
  }

  #failure(status: number): ProviderError | null {
    if (status === 403) {
      return new ProviderError(
        this.name,
        'auth',
        `${this.name} refused the JSON API (HTTP 403): enable it by adding json to search.formats in the instance's settings.yml, then restart SearXNG.`,
      );
    }
    if (status === 401) {
      return new ProviderError(
        this.name,
        'auth',
        `${this.name} asks for a login (HTTP 401): put the user name and password in SEARXNG_URL (https://user:password@host/).`,
      );
    }
    return null;
  }
}
