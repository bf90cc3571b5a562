import { Hono } from 'hono';
import { html, raw } from 'hono/html';
import { dailyUsage, type UsageDay } from '../../llm/index.ts';
import { formatCost, page, type WebEnv } from '../layout.ts';
import type { PageDeps } from './page-deps.ts';

/** Model cost and tokens over the last 30 days. */
export function usageRoutes(deps: PageDeps): Hono<WebEnv> {
  const app = new Hono<WebEnv>();
  const { database } = deps;

  app.get('/usage', async (c) => {
    const session = c.get('session');
    const days = await dailyUsage(database, {
      days: 30,
      ...(session.owner ? {} : { userId: session.userId }),
    });
    return page(c, { title: 'Usage', session, body: usageBody(days) });
  });
  return app;
}

// --- Charts (inline SVG, no script) ---

function barChart(title: string, bars: Array<{ label: string; value: number; text: string }>) {
  const width = 640;
  const height = 200;
  const max = Math.max(...bars.map((bar) => bar.value), 0) || 1;
  const step = bars.length ? Math.min(80, width / bars.length) : width;
  return html`<figure class="chart"><figcaption>${title}</figcaption>
    <svg viewBox="0 0 ${width} ${height + 20}" role="img" aria-label="${title}">
      ${bars.map((bar, index) => {
        const h = Math.round((bar.value / max) * height);
        return html`<g><rect x="${(index * step + 1).toFixed(1)}" y="${height - h}" width="${Math.max(1, step - 2).toFixed(1)}" height="${h}" fill="#3b6fb6"><title>${bar.label}: ${bar.text}</title></rect></g>`;
      })}
      <line x1="0" y1="${height}" x2="${width}" y2="${height}" stroke="#888" stroke-width="1"></line>
      ${bars.length ? html`<text x="0" y="${height + 15}" font-size="12" fill="#555">${bars[0]!.label}</text><text x="${width}" y="${height + 15}" font-size="12" fill="#555" text-anchor="end">${bars[bars.length - 1]!.label}</text>` : ''}
    </svg></figure>`;
}

function usageBody(rows: UsageDay[]) {
  if (!rows.length) return html`<p class="empty">No model calls in the last 30 days.</p>`;
  const byDay = new Map<string, { cost: number; prompt: number; cached: number }>();
  const byModel = new Map<string, { prompt: number; completion: number; cost: number }>();
  for (const row of rows) {
    const day = byDay.get(row.date) ?? { cost: 0, prompt: 0, cached: 0 };
    day.cost += row.cost_usd;
    day.prompt += row.prompt_tokens;
    day.cached += row.cached_tokens;
    byDay.set(row.date, day);
    const model = byModel.get(row.model) ?? { prompt: 0, completion: 0, cost: 0 };
    model.prompt += row.prompt_tokens;
    model.completion += row.completion_tokens;
    model.cost += row.cost_usd;
    byModel.set(row.model, model);
  }
  const days = [...byDay.entries()].sort(([a], [b]) => a.localeCompare(b));
  const models = [...byModel.entries()].sort(
    ([, a], [, b]) => b.prompt + b.completion - (a.prompt + a.completion),
  );
  const total = days.reduce((sum, [, day]) => sum + day.cost, 0);
  return html`<p>Last 30 days: ${formatCost(total)} in total.</p>
    ${barChart(
      'Cost per day (USD)',
      days.map(([date, day]) => ({ label: date, value: day.cost, text: formatCost(day.cost) })),
    )}
    ${barChart(
      'Cached share of prompt tokens per day (%)',
      days.map(([date, day]) => {
        const share = day.prompt ? (100 * day.cached) / day.prompt : 0;
        return { label: date, value: share, text: `${share.toFixed(1)}%` };
      }),
    )}
    ${barChart(
      'Tokens per model',
      models.map(([model, m]) => ({
        label: model,
        value: m.prompt + m.completion,
        text: `${m.prompt + m.completion} tokens`,
      })),
    )}
    <div class="scroll"><table class="list"><thead><tr><th>Model</th><th>Prompt</th><th>Completion</th><th>Cost</th></tr></thead>
    <tbody>${models.map(([model, m]) => html`<tr><td><code>${model}</code></td><td>${m.prompt}</td><td>${m.completion}</td><td>${formatCost(m.cost)}</td></tr>`)}</tbody></table></div>
    ${raw('')}`;
}
