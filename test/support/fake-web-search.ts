import { readFileSync } from 'node:fs';
import { type FakeHttp, type FakeReply, startFakeHttp } from './fake-http.ts';

/*
 * Fakes of the two web search providers, answering with bodies in the shape their docs give:
 * Brave's Web Search API (`GET /res/v1/web/search`, `X-Subscription-Token`, an invalid key is
 * 422 SUBSCRIPTION_TOKEN_INVALID) and SearXNG's JSON API (`GET /search?format=json`, 403 when
 * the json format is not enabled). Both record their requests; failures can be scripted.
 */

export const FAKE_BRAVE_KEY = 'BSA-fake-brave-key-0123456789';

const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(new URL(`./fixtures/web/${name}`, import.meta.url), 'utf8'));

/** The answers, as parsed objects (a test may change them through `answer`). */
export const BRAVE_ANSWER = fixture('brave-web-search.json') as {
  web: { results: Array<Record<string, unknown>> };
};
export const SEARXNG_ANSWER = fixture('searxng-search.json') as { results: Array<Record<string, unknown>> };

export type FakeSearch = FakeHttp & {
  /** Scripted answers for the next searches, in order (e.g. a 503). */
  failNext(...replies: FakeReply[]): void;
};

export async function startFakeBrave(options: { answer?: unknown } = {}): Promise<FakeSearch> {
  const scripted: FakeReply[] = [];
  const http = await startFakeHttp((request) => {
    if (request.path !== '/res/v1/web/search') return { status: 404, json: { message: 'Not Found' } };
    if (request.headers['x-subscription-token'] !== FAKE_BRAVE_KEY) {
      return {
        status: 422,
        json: {
          type: 'ErrorResponse',
          error: {
            id: 'b5e1f7c2-6d0e-4a43-9a3c-0d6f3f1c9e11',
            status: 422,
            code: 'SUBSCRIPTION_TOKEN_INVALID',
            detail: 'The provided subscription token is invalid.',
            meta: {},
          },
          time: 1767621761,
        },
      };
    }
    const next = scripted.shift();
    if (next) return next;
    const count = Number(request.query.get('count') ?? 20);
    const answer = structuredClone((options.answer ?? BRAVE_ANSWER) as typeof BRAVE_ANSWER);
    answer.web.results = answer.web.results.slice(0, count);
    return { status: 200, json: answer };
  });
  return { ...http, failNext: (...replies) => scripted.push(...replies) };
}

export async function startFakeSearxng(options: { json?: boolean } = {}): Promise<FakeSearch> {
  const scripted: FakeReply[] = [];
  const http = await startFakeHttp((request) => {
    if (request.path !== '/search' && request.path !== '/') return { status: 404, json: {} };
    // An instance without `json` in search.formats answers 403 Forbidden.
    if (request.query.get('format') === 'json' && options.json === false) return { status: 403, json: {} };
    const next = scripted.shift();
    if (next) return next;
    return { status: 200, json: SEARXNG_ANSWER };
  });
  return { ...http, failNext: (...replies) => scripted.push(...replies) };
}
