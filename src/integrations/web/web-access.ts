import type { Queryable } from '../../db/index.ts';
import type { ResolveAll, UrlCheck } from '../../security/index.ts';
import type { Lookup } from '../integrations.ts';
import { checkPageUrl, fetchPage, type PageFetch } from './page-fetch.ts';
import { readWholeOnly } from './page-text.ts';
import { webSearchProvider } from './search-provider.ts';
import type { WebSearchProvider } from './search-types.ts';
import { reserveWebCall, type WebBudget, type WebCallKind } from './web-budget.ts';
import type { WebSettings } from './web-settings.ts';

export type WebAccessOptions = {
  database: Queryable;
  /** Read on every call: a reloaded config applies at once. */
  settings: () => WebSettings;
  /** How search providers reach their APIs (default global fetch). */
  fetch?: typeof fetch;
  /** DNS for web.fetch's SSRF guard (default the system resolver). */
  resolve?: ResolveAll;
  now?: () => Date;
};

/**
 * The web as the skills see it: the configured search provider, pages fetched through the
 * SSRF guard with size and time limits, and the per-user daily budget of calls.
 */
export class WebAccess {
  readonly #options: WebAccessOptions;

  constructor(options: WebAccessOptions) {
    this.#options = options;
  }

  /** The configured search provider, or why there is none (see webSearchProvider). */
  searchProvider(): Lookup<WebSearchProvider> {
    return webSearchProvider(this.#options.settings().web, this.#options.fetch);
  }

  /** Whether web.fetch may reach `url` (scheme, credentials, addresses, web.allow_hosts). */
  check(url: URL): Promise<UrlCheck> {
    return checkPageUrl(url, { settings: this.#options.settings(), resolve: this.#options.resolve });
  }

  /** Reads `url` within the limits; see fetchPage. */
  fetchPage(url: URL, signal: AbortSignal): Promise<PageFetch> {
    return fetchPage(url, {
      settings: this.#options.settings(),
      resolve: this.#options.resolve,
      signal,
      wholeOnly: readWholeOnly,
    });
  }

  /** Counts one web call of `userId` against today's budget, or says the budget is spent. */
  reserve(userId: string, kind: WebCallKind): Promise<WebBudget> {
    return reserveWebCall(this.#options.database, {
      userId,
      kind,
      limit: this.#options.settings().limits.web_calls_per_user_per_day,
      now: (this.#options.now ?? (() => new Date()))(),
    });
  }
}
