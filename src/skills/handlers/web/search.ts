import { z } from 'zod';
import { ProviderError, type WebSearchResult } from '../../../integrations/index.ts';
import { fenceExternal } from '../../external.ts';
import { flag } from '../../flags.ts';
import { defineHandler, fail, ok } from '../../types.ts';
import { budgetSpent, webOf, webSource } from './shared.ts';

const MAX_QUERY_CHARS = 400;
const FRESHNESS_LABEL = { day: 'the past day', week: 'the past week', month: 'the past month' } as const;

export const webSearchHandler = defineHandler({
  name: 'web.search',
  flags: z
    .object({
      query: flag.string(),
      limit: flag.int({ min: 1, max: 20 }).default(5),
      freshness: flag.enum(['day', 'week', 'month']).optional(),
    })
    .strict(),
  async execute(flags, ctx) {
    if (flags.query.length > MAX_QUERY_CHARS)
      return fail(
        `--query is ${flags.query.length} characters; search engines take at most ${MAX_QUERY_CHARS}. Use the key words only.`,
      );
    const web = webOf(ctx);
    const found = web.searchProvider();
    if (!found.ok) return fail(found.reason, { metadata: { notConfigured: true } });
    const provider = found.provider;
    const budget = await web.reserve(ctx.user.id, 'search');
    if (!budget.allowed) return budgetSpent(budget);
    let results: WebSearchResult[];
    try {
      results = await provider.search(
        { query: flags.query, limit: flags.limit, freshness: flags.freshness },
        ctx.signal,
      );
    } catch (error) {
      // A refused key or query is for the user to fix; a provider that is down counts toward the breaker.
      if (error instanceof ProviderError && !error.infrastructure)
        return fail(error.message, { metadata: { provider: provider.name, issue: error.issue } });
      throw error;
    }
    const within = flags.freshness ? ` from ${FRESHNESS_LABEL[flags.freshness]}` : '';
    const metadata = {
      provider: provider.name,
      count: results.length,
      urls: results.map((result) => result.url),
    };
    if (results.length === 0)
      return ok(`No results${within} for "${flags.query}" from ${provider.name}. Try other words.`, {
        metadata,
      });
    const fences = results.map((result, index) =>
      fenceExternal(
        webSource(result.url),
        [
          `${index + 1}. ${result.title}`,
          `${result.url}${result.date ? ` · ${result.date}` : ''}`,
          ...(result.snippet ? [result.snippet] : []),
        ].join('\n'),
      ),
    );
    return ok(
      `${results.length} result${results.length === 1 ? '' : 's'}${within} for "${flags.query}" from ${provider.name}, best first. Read a page with web.fetch --url URL.\n${fences.join('\n')}`,
      { metadata },
    );
  },
});
