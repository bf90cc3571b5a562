import type { WebConfig } from '../../config/index.ts';
import type { Lookup } from '../integrations.ts';
import { BraveSearch } from './brave-search.ts';
import type { WebSearchProvider } from './search-types.ts';
import { SearxngSearch } from './searxng-search.ts';

/** What web.search answers when no provider is configured. */
export const SEARCH_NOT_CONFIGURED =
  'Web search is not configured. Set BRAVE_SEARCH_API_KEY (a Brave Search API key) or SEARXNG_URL (a self-hosted SearXNG with the json format enabled) in the environment and restart Steward, or set web.brave.api_key or web.searxng.url in steward.yaml (applies without a restart). web.fetch works without either.';

/** The configured search provider: Brave when its key is set, else SearXNG when its URL is, else why there is none. */
export function webSearchProvider(
  web: WebConfig,
  fetchImpl: typeof fetch = fetch,
): Lookup<WebSearchProvider> {
  const http = { fetch: fetchImpl, timeoutMs: web.search_timeout_ms };
  if (web.brave.api_key)
    return {
      ok: true,
      provider: new BraveSearch({ apiKey: web.brave.api_key, apiUrl: web.brave.api_url, http }),
    };
  if (web.searxng.url) return { ok: true, provider: new SearxngSearch({ url: web.searxng.url, http }) };
  return { ok: false, reason: SEARCH_NOT_CONFIGURED };
}
