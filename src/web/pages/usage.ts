import { Hono } from 'hono';
import { html } from 'hono/html';
import { dailyUsage, type UsageDay } from '../../llm/index.ts';
import { type Bar, columnChart, rowChart } from '../charts.ts';
import { formatCost, page, type WebEnv } from '../layout.ts';
import type { PageDeps } from './page-deps.ts';

const DAYS = 30;

/** Model cost, tokens and cached share over the last 30 days, per day and per model. */
export function usageRoutes(deps: PageDeps): Hono<WebEnv> {
  const app = new Hono<WebEnv>();
  const { database } = deps;
  const now = deps.now ?? (() => new Date());

  app.get('/usage', async (c) => {
    const session = c.get('session');
    const days = await dailyUsage(database, {
      days: DAYS,
      ...(session.owner ? {} : { userId: session.userId }),
    });
    return page(c, { title: 'Usage', session, body: usageBody(days, now().toISOString().slice(0, 10)) });
  });
  return app;
}

type Totals = { calls: number; prompt: number; cached: number; completion: number; cost: number };
const empty = (): Totals => ({ calls: 0, prompt: 0, cached: 0, completion: 0, cost: 0 });
const share = (totals: Totals) => (totals.prompt ? (100 * totals.cached) / totals.prompt : 0);

/** An axis value in dollars: as many decimals as it needs, no more. */
export const axisCost = (usd: number) => `$${usd === 0 ? '0' : Number(usd.toPrecision(3)).toString()}`;
const percent = (value: number) => `${value.toFixed(value >= 10 || value === 0 ? 0 : 1)}%`;

/** Every day from `first` through `last`, `YYYY-MM-DD`. */
function dayRange(first: string, last: string): string[] {
  const out: string[] = [];
  for (let day = new Date(`${first}T00:00:00Z`); out.length <= DAYS; day.setUTCDate(day.getUTCDate() + 1)) {
    const text = day.toISOString().slice(0, 10);
    if (text > last) break;
    out.push(text);
  }
  return out;
}

function usageBody(rows: UsageDay[], today: string) {
  if (!rows.length) return html`<p class="empty">No model calls in the last ${DAYS} days.</p>`;
  const byDay = new Map<string, Totals>();
  const byDayModel = new Map<string, Map<string, number>>();
  const byModel = new Map<string, Totals>();
  for (const row of rows) {
    for (const [map, key] of [
      [byDay, row.date],
      [byModel, row.model],
    ] as const) {
      const totals = map.get(key) ?? empty();
      totals.calls += row.calls;
      totals.prompt += row.prompt_tokens;
      totals.cached += row.cached_tokens;
      totals.completion += row.completion_tokens;
      totals.cost += row.cost_usd;
      map.set(key, totals);
    }
    const models = byDayModel.get(row.date) ?? new Map<string, number>();
    models.set(row.model, (models.get(row.model) ?? 0) + row.cost_usd);
    byDayModel.set(row.date, models);
  }
  const dates = [...byDay.keys()].sort();
  // Days without calls are shown as empty days: the axis is time, not a list of busy days.
  const days = dayRange(dates[0]!, dates.at(-1)! > today ? dates.at(-1)! : today);
  const models = [...byModel.entries()].sort(([, a], [, b]) => b.cost - a.cost || b.prompt - a.prompt);
  const total = [...byDay.values()].reduce((sum, day) => sum + day.cost, 0);
  const label = (date: string) => (days.length === 1 ? date : date.slice(5));
  const costBars: Bar[] = days.map((date) => ({
    label: label(date),
    segments: models.map(([model]) => ({ series: model, value: byDayModel.get(date)?.get(model) ?? 0 })),
  }));
  const shareBars: Bar[] = days.map((date) => {
    const day = byDay.get(date);
    return { label: label(date), segments: [{ series: '', value: day ? share(day) : 0 }] };
  });
  return html`<p>Last ${DAYS} days: <strong>${formatCost(total)}</strong> in ${[...byDay.values()].reduce((sum, day) => sum + day.calls, 0)} model calls${days.length === 1 ? `, all on ${days[0]}` : ''}. Days are UTC.</p>
    <div class="charts">
      ${columnChart({ title: 'Cost per day and model (USD)', bars: costBars, format: axisCost, legend: true })}
      ${columnChart({ title: 'Cached share of prompt tokens per day', bars: shareBars, format: percent, max: 100 })}
      ${rowChart({ title: 'Cost per model (USD)', rows: models.map(([model, m]) => ({ label: model, value: m.cost })), format: axisCost })}
      ${rowChart({ title: 'Cached share of prompt tokens per model', rows: models.map(([model, m]) => ({ label: model, value: share(m) })), format: percent, max: 100 })}
    </div>
    <h2>Per model</h2>
    <div class="scroll"><table class="list stack usage-models"><thead><tr><th>Model</th><th>Calls</th><th>Prompt</th><th>Cached</th><th>Completion</th><th>Cost</th></tr></thead>
    <tbody>${models.map(
      ([model, m]) =>
        html`<tr data-model="${model}"><td data-label="Model"><code>${model}</code></td><td data-label="Calls">${m.calls}</td><td data-label="Prompt">${m.prompt}</td><td data-label="Cached">${m.cached} (${percent(share(m))})</td><td data-label="Completion">${m.completion}</td><td data-label="Cost">${formatCost(m.cost)}</td></tr>`,
    )}</tbody></table></div>
    <details><summary>Per day</summary>
    <div class="scroll"><table class="list stack usage-days"><thead><tr><th>Day</th><th>Calls</th><th>Cached share</th><th>Cost</th></tr></thead>
    <tbody>${dates.map((date) => {
      const day = byDay.get(date)!;
      return html`<tr data-day="${date}"><td data-label="Day">${date}</td><td data-label="Calls">${day.calls}</td><td data-label="Cached share">${percent(share(day))}</td><td data-label="Cost">${formatCost(day.cost)}</td></tr>`;
    })}</tbody></table></div></details>`;
}
