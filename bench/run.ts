import { readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BASELINE_COMMIT } from './baseline.ts';
import { type Bench, type BenchSection, SPEED_FIGURES, type SpeedFigure } from './lib.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(here)
  .filter((file) => file.endsWith('.bench.ts'))
  .filter((file) => only.length === 0 || only.some((name) => file.includes(name)))
  .sort();

const sections: BenchSection[] = [];
for (const file of files) {
  process.stderr.write(`bench: ${file}\n`);
  const started = performance.now();
  const module = (await import(path.join(here, file))) as { default: Bench };
  const result = await module.default();
  sections.push(...(Array.isArray(result) ? result : [result]));
  process.stderr.write(`bench: ${file} done in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
}

const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
const lines = [
  '# Benchmark results',
  '',
  `Written by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)}.`,
  `Machine: ${os.cpus().length} × ${cpu}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM, ${os.platform()} ${os.release()}.`,
  `Node ${process.version}.`,
  '',
];
lines.push(...speedSummary(sections));
for (const section of sections) {
  lines.push(`## ${section.title}`, '', section.description, '');
  lines.push(`| ${section.columns.join(' | ')} |`, `|${section.columns.map(() => '---').join('|')}|`);
  for (const row of section.rows) lines.push(`| ${row.join(' | ')} |`);
  if (section.notes?.length) lines.push('', ...section.notes.map((note) => `- ${note}`));
  lines.push('');
}
const target = path.join(here, 'RESULTS.md');
if (only.length > 0) {
  process.stdout.write(`${lines.join('\n')}\n`);
  process.stderr.write('bench: a filtered run prints its results and leaves RESULTS.md alone\n');
} else {
  writeFileSync(target, `${lines.join('\n')}\n`);
  process.stderr.write(`bench: wrote ${path.relative(process.cwd(), target)}\n`);
}

/** The §6 figures the sections of this run measured, before and after, as one table. */
function speedSummary(sections: readonly BenchSection[]): string[] {
  const values = new Map<SpeedFigure, { before?: string; now?: string }>();
  for (const figure of sections.flatMap((section) => section.figures ?? [])) {
    const row = values.get(figure.name) ?? {};
    row[figure.version] = figure.value;
    values.set(figure.name, row);
  }
  if (values.size === 0) return [];
  const rows = (Object.keys(SPEED_FIGURES) as SpeedFigure[])
    .filter((name) => values.has(name))
    .map(
      (name) =>
        `| ${name} | ${values.get(name)?.before ?? '—'} | ${values.get(name)?.now ?? '—'} | ${SPEED_FIGURES[name]} |`,
    );
  return [
    '## Speed and footprint, before and after (issue #22 §6)',
    '',
    `Collected from the sections below, all measured in this run: "before" is commit ${BASELINE_COMMIT} (checked out with its own \`npm ci\`), "now" this tree. How each figure is taken is in its section.`,
    '',
    `| figure | before (${BASELINE_COMMIT}) | now | goal |`,
    '|---|---|---|---|',
    ...rows,
    '',
  ];
}
