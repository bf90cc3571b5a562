import { describe, expect, it } from 'vitest';
import { columnChart, rowChart, tickStep } from './charts.ts';

const text = async (value: unknown) => String(await value);

describe('server-drawn charts', () => {
  it('picks round tick steps', () => {
    expect([tickStep(0.0093), tickStep(0.4), tickStep(7), tickStep(100), tickStep(0)]).toEqual([
      0.005, 0.1, 2, 50, 1,
    ]);
  });

  it('draws a single day as one narrow, labelled bar on a y axis with values', async () => {
    const svg = await text(
      columnChart({
        title: 'Cost',
        bars: [{ label: '2026-11-27', segments: [{ series: 'm1', value: 0.03 }] }],
        format: (value) => `$${value}`,
      }),
    );
    const width = Number(/<rect x="[\d.]+" y="[\d.]+" width="([\d.]+)"/.exec(svg)?.[1]);
    expect(width).toBeLessThanOrEqual(40);
    expect(svg).toContain('>2026-11-27</text>');
    expect(svg).toContain('<text class="value"');
    expect(svg).toContain('>$0.03</text>');
    // The axis: 0, 0.01, 0.02, 0.03 as tick labels.
    for (const tick of ['$0', '$0.01', '$0.02', '$0.03'])
      expect(svg).toContain(`text-anchor="end">${tick}</text>`);
    expect(svg).toContain('<title>2026-11-27 · m1: $0.03</title>');
  });

  it('stacks series per bar with a legend, and keeps a share on a 0–100 axis', async () => {
    const stacked = await text(
      columnChart({
        title: 'Cost',
        bars: [
          {
            label: 'a',
            segments: [
              { series: 'x', value: 1 },
              { series: 'y', value: 2 },
            ],
          },
          {
            label: 'b',
            segments: [
              { series: 'x', value: 0 },
              { series: 'y', value: 1 },
            ],
          },
        ],
        format: String,
        legend: true,
      }),
    );
    expect(stacked).toContain('data-label="a" data-value="3"');
    expect(stacked.match(/<li>/g)).toHaveLength(2);
    const share = await text(
      columnChart({
        title: 'Share',
        bars: [{ label: 'a', segments: [{ series: '', value: 40 }] }],
        format: String,
        max: 100,
      }),
    );
    expect(share).toContain('text-anchor="end">100</text>');
    const rows = await text(
      rowChart({ title: 'Per model', rows: [{ label: 'model-a', value: 2 }], format: String }),
    );
    expect(rows).toContain('>model-a</text>');
    expect(rows).toContain('<text class="value"');
  });
});
