import { errorMessage, ProviderError } from '../../errors.ts';
import { webSearchProvider } from './search-provider.ts';
import type { WebSettings } from './web-settings.ts';

export type WebCheck = { name: string; ok: boolean; note?: boolean; detail: string; fix?: string };

/**
 * `steward doctor`'s web lines: which search provider web.search uses and whether it answers a
 * one-result query (off is not a failure: the skill then says how to configure one), and the
 * limits web.fetch works within.
 */
export async function webChecks(settings: WebSettings, fetchImpl?: typeof fetch): Promise<WebCheck[]> {
  const { web, limits } = settings;
  const budget = limits.web_calls_per_user_per_day
    ? `${limits.web_calls_per_user_per_day} web calls per user per day`
    : 'no daily limit on web calls';
  const opened = web.allow_hosts.length ? `; private hosts open: ${web.allow_hosts.join(', ')}` : '';
  const fetchCheck: WebCheck = {
    name: 'web fetch',
    ok: true,
    detail: `pages up to ${web.fetch_max_bytes} bytes and ${web.fetch_timeout_ms / 1000} s, public addresses only${opened}; ${budget}`,
  };
  const found = webSearchProvider(
    { ...web, search_timeout_ms: Math.min(web.search_timeout_ms, 10_000) },
    fetchImpl,
  );
  if (!found.ok) {
    return [
      {
        name: 'web search',
        ok: true,
        detail:
          'off: web.search answers with how to configure a provider (set BRAVE_SEARCH_API_KEY, or SEARXNG_URL for a self-hosted SearXNG)',
      },
      fetchCheck,
    ];
  }
  const provider = found.provider;
  try {
    const results = await provider.search({ query: 'steward', limit: 1 }, AbortSignal.timeout(15_000));
    return [
      {
        name: 'web search',
        ok: true,
        detail: `${provider.name} answers (${results.length} result${results.length === 1 ? '' : 's'} for a test query)`,
      },
      fetchCheck,
    ];
  } catch (error) {
    return [
      {
        name: 'web search',
        ok: false,
        detail: errorMessage(error),
        fix:
          error instanceof ProviderError && error.issue === 'auth'
            ? 'see the message above'
            : web.brave.api_key
              ? 'check BRAVE_SEARCH_API_URL and that the Brave Search API is reachable from here'
              : 'check SEARXNG_URL and that the instance is running',
      },
      fetchCheck,
    ];
  }
}
