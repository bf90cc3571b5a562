import type { ResolvedConfig } from '../config/index.ts';
import { openDatabase } from '../db/index.ts';
import { dailyUsage, type UsageDay } from '../llm/index.ts';
import { userIdProblem } from '../users/index.ts';
import { CliExit, EXIT_ERROR, EXIT_OK, EXIT_USAGE } from './common.ts';
import { remoteServer } from './remote.ts';

export type UsageOptions = { json?: boolean; days: string; user?: string };

/**
 * `steward usage`: tokens, cached share and cost per UTC day, user and model, from the stored
 * LLM calls (through the running server's API when one owns the data dir).
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
  const rows = await fetchUsage(config, days, options.user);
  process.stdout.write(
    options.json ? `${JSON.stringify({ days: rows }, null, 2)}\n` : formatTable(rows, days),
  );
  throw new CliExit(EXIT_OK);
}

async function fetchUsage(
  config: ResolvedConfig,
  days: number,
  userId: string | undefined,
): Promise<UsageDay[]> {
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
    return ((await response.json()) as { days: UsageDay[] }).days;
  }
  const { database, lock } = await openDatabase(config);
  try {
    return await dailyUsage(database, { days, userId });
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
