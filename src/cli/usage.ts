import type { ResolvedConfig } from '../config/index.ts';
import { openDatabase } from '../db/index.ts';
import { dailyWebCalls, type WebCallsDay } from '../integrations/index.ts';
import { dailyUsage, type UsageDay } from '../llm/index.ts';
import { userIdProblem } from '../users/index.ts';
import { CliExit, EXIT_ERROR, EXIT_OK, EXIT_USAGE } from './common.ts';
import { remoteServer } from './remote.ts';

export type UsageOptions = { json?: boolean; days: string; user?: string };

/**
 * `steward usage`: tokens, cached share and cost per UTC day, user and model, from the stored
 * LLM calls, and web calls (web.search, web.fetch) per UTC day and user (through the running
 * server's API when one owns the data dir).
 */
export async function usageCommand(config: ResolvedConfig, options: UsageOptions): Promise<void> {
  const days = Number(options.days);
  if (!Number.isInteger(days) || days < 1 || days > 366) {
    throw new CliExit(
      EXIT_USAGE,
      `steward usage: --days must be a whole number from 1 to 366, got "${options.days}"`,
    );
  }
  if (options.user) {
    const problem = userIdProblem(options.user);
    if (problem) throw new CliExit(EXIT_USAGE, `steward usage: ${problem}`);
  }
  const { days: rows, web_calls: webCalls } = await fetchUsage(config, days, options.user);
  process.stdout.write(
    options.json
      ? `${JSON.stringify({ days: rows, web_calls: webCalls }, null, 2)}\n`
      : `${formatTable(rows, days)}${formatWebCalls(webCalls)}`,
  );
  throw new CliExit(EXIT_OK);
}

type Usage = { days: UsageDay[]; web_calls: WebCallsDay[] };

async function fetchUsage(config: ResolvedConfig, days: number, userId: string | undefined): Promise<Usage> {
  const remote = remoteServer(config);
  if (remote) {
    const query = new URLSearchParams({ days: String(days), ...(userId ? { user: userId } : {}) });
    const response = await fetch(`${remote.url}/api/usage?${query}`, { headers: remote.headers });
    if (!response.ok) {
      const body = (await response.json().catch(() => ({}))) as { message?: string };
      throw new CliExit(
        EXIT_ERROR,
        `steward usage: the server at ${remote.url} answered ${response.status}: ${body.message ?? ''}`,
      );
    }
    // A server from before web calls were counted answers without them.
    const body = (await response.json()) as { days: UsageDay[]; web_calls?: WebCallsDay[] };
    return { days: body.days, web_calls: body.web_calls ?? [] };
  }
  const { database, lock } = await openDatabase(config);
  try {
    return {
      days: await dailyUsage(database, { days, userId }),
      web_calls: await dailyWebCalls(database, { days, userId }),
    };
  } finally {
    await database.close();
    lock?.release();
  }
}

const percent = (part: number, whole: number) => (whole > 0 ? `${Math.round((100 * part) / whole)}%` : '-');
const usd = (amount: number) => `$${amount.toFixed(4)}`;

function formatTable(rows: UsageDay[], days: number): string {
  if (rows.length === 0) return `No LLM calls in the last ${days} day(s).\n`;
  const header = ['date (UTC)', 'user', 'model', 'calls', 'prompt', 'cached', 'completion', 'cost'];
  const total = rows.reduce(
    (sum, row) => ({
      calls: sum.calls + row.calls,
      prompt: sum.prompt + row.prompt_tokens,
      cached: sum.cached + row.cached_tokens,
      completion: sum.completion + row.completion_tokens,
      cost: sum.cost + row.cost_usd,
    }),
    { calls: 0, prompt: 0, cached: 0, completion: 0, cost: 0 },
  );
  const lines = [
    header,
    ...rows.map((row) => [
      row.date,
      row.user,
      row.model,
      String(row.calls),
      String(row.prompt_tokens),
      `${row.cached_tokens} (${percent(row.cached_tokens, row.prompt_tokens)})`,
      String(row.completion_tokens),
      usd(row.cost_usd),
    ]),
    [
      'total',
      '',
      '',
      String(total.calls),
      String(total.prompt),
      `${total.cached} (${percent(total.cached, total.prompt)})`,
      String(total.completion),
      usd(total.cost),
    ],
  ];
  const widths = header.map((_, column) => Math.max(...lines.map((line) => line[column]!.length)));
  const numeric = new Set([3, 4, 5, 6, 7]);
  return `${lines
    .map((line) =>
      line
        .map((cell, column) =>
          numeric.has(column) ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!),
        )
        .join('  ')
        .trimEnd(),
    )
    .join('\n')}\n`;
}

/** Web calls per UTC day and user, below the LLM table (nothing when there were none). */
function formatWebCalls(rows: WebCallsDay[]): string {
  if (rows.length === 0) return '';
  const header = ['date (UTC)', 'user', 'searches', 'fetches', 'web calls'];
  const total = rows.reduce(
    (sum, row) => ({ searches: sum.searches + row.searches, fetches: sum.fetches + row.fetches }),
    { searches: 0, fetches: 0 },
  );
  const lines = [
    header,
    ...rows.map((row) => [row.date, row.user, String(row.searches), String(row.fetches), String(row.calls)]),
    ['total', '', String(total.searches), String(total.fetches), String(total.searches + total.fetches)],
  ];
  const widths = header.map((_, column) => Math.max(...lines.map((line) => line[column]!.length)));
  return `\n${lines
    .map((line) =>
      line
        .map((cell, column) => (column >= 2 ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')}\n`;
}
