import { html } from 'hono/html';

/*
 * Charts drawn on the server as SVG (no script, no library): axes with ticks and their values,
 * each bar's value written on it, and a <title> per bar for a pointer. One bar stays one bar's
 * width, so a single day reads as a day, not as a wall of colour.
 */

export type Segment = { series: string; value: number };
export type Bar = { label: string; segments: Segment[] };
export type Row = { label: string; value: number };

/** The drawing's width: about a phone's, so its text stays readable there and on a desktop. */
const WIDTH = 360;
const PALETTE = ['#3b6fb6', '#d9822b', '#2e8b57', '#8e5bb5', '#c0392b', '#5d6d7e', '#b7950b', '#17a2b8'];
const MAX_BAR = 32;

/** A round step for about `count` ticks up to `max` (1, 2 or 5 times a power of ten). */
export function tickStep(max: number, count = 4): number {
  if (!(max > 0)) return 1;
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((factor) => factor * power).find((candidate) => candidate >= raw);
  return step ?? 10 * power;
}

/** The series in first-seen order, each with its colour. */
export function seriesColours(bars: Bar[]): Map<string, string> {
  const colours = new Map<string, string>();
  for (const bar of bars)
    for (const segment of bar.segments)
      if (!colours.has(segment.series)) colours.set(segment.series, PALETTE[colours.size % PALETTE.length]!);
  return colours;
}

/**
 * Vertical bars over labelled slots (days), stacked by series, with a y axis in `format`'s
 * units. `max` fixes the top of the axis (100 for a share); otherwise it fits the tallest bar.
 */
export function columnChart(options: {
  title: string;
  bars: Bar[];
  format: (value: number) => string;
  max?: number;
  legend?: boolean;
}) {
  const { bars, format } = options;
  const left = 48;
  const right = 8;
  const top = 18;
  const plot = 150;
  const bottom = 36;
  const totals = bars.map((bar) => bar.segments.reduce((sum, segment) => sum + segment.value, 0));
  const step = tickStep(options.max ?? Math.max(0, ...totals));
  const axisTop = options.max ?? Math.max(step, Math.ceil(Math.max(0, ...totals) / step) * step);
  const ticks = Array.from({ length: Math.floor(axisTop / step + 1e-9) + 1 }, (_, index) => index * step);
  const y = (value: number) => top + plot - (value / axisTop) * plot;
  const slot = (WIDTH - left - right) / Math.max(1, bars.length);
  const barWidth = Math.min(MAX_BAR, Math.max(2, slot * 0.7));
  // Every label fits when there are few; otherwise about five, always the first and the last.
  const every = Math.max(1, Math.ceil(bars.length / 5));
  const showLabel = (index: number) => index % every === 0 || index === bars.length - 1;
  const showValues = bars.length <= 8;
  const colours = seriesColours(bars);
  const height = top + plot + bottom;
  return html`<figure class="chart"><figcaption>${options.title}</figcaption>
    <svg viewBox="0 0 ${WIDTH} ${height}" role="img" aria-label="${options.title}" class="chart-svg">
      ${ticks.map(
        (tick) =>
          html`<g class="tick"><line x1="${left}" x2="${WIDTH - right}" y1="${y(tick).toFixed(1)}" y2="${y(tick).toFixed(1)}" stroke="#e3e6ea"></line><text x="${left - 6}" y="${(y(tick) + 4).toFixed(1)}" text-anchor="end">${format(tick)}</text></g>`,
      )}
      <line x1="${left}" x2="${left}" y1="${top}" y2="${top + plot}" stroke="#888"></line>
      <line x1="${left}" x2="${WIDTH - right}" y1="${top + plot}" y2="${top + plot}" stroke="#888"></line>
      ${bars.map((bar, index) => {
        const x = left + slot * index + (slot - barWidth) / 2;
        let base = 0;
        const total = totals[index]!;
        return html`<g class="bar" data-label="${bar.label}" data-value="${total}">
          ${bar.segments.map((segment) => {
            const from = base;
            base += segment.value;
            const segmentHeight = Math.max(0, y(from) - y(base));
            return html`<rect x="${x.toFixed(1)}" y="${y(base).toFixed(1)}" width="${barWidth.toFixed(1)}" height="${segmentHeight.toFixed(1)}" fill="${colours.get(segment.series)}"><title>${bar.label}${segment.series ? ` · ${segment.series}` : ''}: ${format(segment.value)}</title></rect>`;
          })}
          ${showValues ? html`<text class="value" x="${(x + barWidth / 2).toFixed(1)}" y="${(y(total) - 4).toFixed(1)}" text-anchor="middle">${format(total)}</text>` : ''}
          ${showLabel(index) ? html`<text x="${(x + barWidth / 2).toFixed(1)}" y="${top + plot + 16}" text-anchor="middle">${bar.label}</text>` : ''}
        </g>`;
      })}
    </svg>
    ${options.legend && colours.size > 0 ? legend(colours) : ''}
  </figure>`;
}

/** Horizontal bars, one per row (models), each labelled above and valued at its end. */
export function rowChart(options: {
  title: string;
  rows: Row[];
  format: (value: number) => string;
  max?: number;
}) {
  const { rows, format } = options;
  const rowHeight = 38;
  const left = 4;
  const valueRoom = 60;
  const height = rows.length * rowHeight + 8;
  const max = options.max ?? Math.max(0, ...rows.map((row) => row.value));
  const scale = (value: number) => (max > 0 ? (value / max) * (WIDTH - left - valueRoom) : 0);
  return html`<figure class="chart"><figcaption>${options.title}</figcaption>
    <svg viewBox="0 0 ${WIDTH} ${height}" role="img" aria-label="${options.title}" class="chart-svg">
      ${rows.map((row, index) => {
        const y = index * rowHeight + 4;
        const width = Math.max(row.value > 0 ? 2 : 0, scale(row.value));
        return html`<g class="bar" data-label="${row.label}" data-value="${row.value}">
          <text x="${left}" y="${y + 12}">${row.label}</text>
          <rect x="${left}" y="${y + 17}" width="${width.toFixed(1)}" height="14" fill="#3b6fb6"><title>${row.label}: ${format(row.value)}</title></rect>
          <text class="value" x="${(left + width + 6).toFixed(1)}" y="${y + 29}">${format(row.value)}</text>
        </g>`;
      })}
    </svg>
  </figure>`;
}

function legend(colours: Map<string, string>) {
  return html`<ul class="legend">${[...colours].map(
    ([series, colour]) =>
      html`<li><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill="${colour}"></rect></svg> ${series}</li>`,
  )}</ul>`;
}
