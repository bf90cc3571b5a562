import { z } from 'zod';
import { type PageText, pageText } from '../../../integrations/index.ts';
import { fenceExternal } from '../../external.ts';
import { flag } from '../../flags.ts';
import { quoteArg } from '../../protocol/index.ts';
import { defineHandler, fail, ok } from '../../types.ts';
import { budgetSpent, webOf, webSource } from './shared.ts';

/** The most one call shows: what fits a skill result (8,000 characters) with its notes. */
export const MAX_CHARS = 7_000;

export const webFetchHandler = defineHandler({
  name: 'web.fetch',
  flags: z
    .object({
      url: flag.string(),
      max_chars: flag.int({ min: 200, max: MAX_CHARS }).default(6_000),
      offset: flag.int({ min: 0 }).default(0),
    })
    .strict(),
  async execute(flags, ctx) {
    let url: URL;
    try {
      url = new URL(flags.url);
    } catch {
      return fail(`"${flags.url}" is not a URL: give a full address such as https://example.com/page.`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return fail(
        `Not fetched: ${url.protocol} addresses are refused; web.fetch reads http and https pages only.`,
        {
          metadata: { blocked: 'scheme' },
        },
      );
    const web = webOf(ctx);
    // A refused address costs nothing from the budget: nothing was sent.
    const checked = await web.check(url);
    if (!checked.ok) return fail(`Not fetched: ${checked.reason}.`, { metadata: { blocked: 'address' } });
    const budget = await web.reserve(ctx.user.id, 'fetch');
    if (!budget.allowed) return budgetSpent(budget);

    const fetched = await web.fetchPage(url, ctx.signal);
    if (!fetched.ok)
      return fail(
        `Not fetched: ${fetched.reason}.`,
        fetched.refused ? { metadata: { blocked: 'address' } } : {},
      );
    const { page } = fetched;
    const read = await pageText(page);
    if (!read.ok) return fail(`${read.reason}.`);

    const document = withHeading(read);
    const total = document.length;
    if (total === 0)
      return ok(`${page.url} has no readable text (${describe(read)}).`, { metadata: { url: page.url } });
    if (flags.offset >= total)
      return fail(
        `--offset ${flags.offset} is past the end: the text of ${page.url} has ${total} characters.`,
      );
    let end = Math.min(total, flags.offset + flags.max_chars);
    // Never split a surrogate pair.
    if (end < total && /[\uD800-\uDBFF]/.test(document[end - 1]!)) end--;
    const shown = document.slice(flags.offset, end);
    const redirected = page.redirects.length ? `; redirected from ${page.redirects[0]}` : '';
    const range =
      flags.offset > 0 || end < total ? ` Characters ${flags.offset + 1}–${end} of ${total}.` : '';
    const notes: string[] = [];
    if (page.cut)
      notes.push(
        `Only the first ${page.bytes.byteLength} bytes of the page were read (web.fetch_max_bytes): its text was cut there, and the page goes on.`,
      );
    if (end < total)
      notes.push(
        `Cut: ${total - end} more characters. Read on with web.fetch --url ${quoteArg(page.url)} --offset ${end} (each call counts toward the daily web budget).`,
      );
    return ok(
      [
        `Fetched ${page.url} (${describe(read)}${redirected}).${range}`,
        fenceExternal(webSource(page.url), shown),
        ...notes,
      ].join('\n'),
      {
        metadata: {
          url: page.url,
          redirects: page.redirects,
          kind: read.kind,
          bytes: page.bytes.byteLength,
          bytesCut: page.cut,
          chars: total,
          shown: [flags.offset, end],
        },
      },
    );
  },
});

function describe(read: Extract<PageText, { ok: true }>): string {
  if (read.kind === 'pdf') return `PDF, ${read.pages} page${read.pages === 1 ? '' : 's'}`;
  return read.kind === 'html' ? 'web page as markdown' : 'text';
}

/** The page's title and byline above its text, unless the text already opens with the title. */
function withHeading(read: Extract<PageText, { ok: true }>): string {
  const head: string[] = [];
  const firstLine = read.text.split('\n', 1)[0] ?? '';
  if (read.title && !firstLine.includes(read.title)) head.push(`# ${read.title}`);
  if (read.about) head.push(read.about);
  return head.length ? `${head.join('\n')}\n\n${read.text}` : read.text;
}
