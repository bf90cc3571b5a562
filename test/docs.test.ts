import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { z } from 'zod';
import { CONFIGURATION_DOC, configDocProblems, renderConfigurationDoc } from '../scripts/docs-config.ts';

it('docs/configuration.md is what the config schema generates now', () => {
  const written = readFileSync(CONFIGURATION_DOC, 'utf8');
  expect(
    written === renderConfigurationDoc(),
    'docs/configuration.md is out of date: run npm run docs:config',
  ).toBe(true);
});

it('describes every setting, and every environment variable names a setting', () => {
  expect(configDocProblems()).toEqual([]);
});

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const PAGES = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6} (.+)$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

function withoutCode(text: string): string {
  return text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
}

it('README.md is a guide of at most 350 lines', () => {
  const lines = readFileSync(path.join(ROOT, 'README.md'), 'utf8').trimEnd().split('\n').length;
  expect(lines).toBeLessThanOrEqual(350);
});

it('every relative link in README.md and docs/*.md points to an existing file and heading', () => {
  const broken: string[] = [];
  for (const page of PAGES) {
    const text = readFileSync(path.join(ROOT, page), 'utf8');
    for (const [, target] of withoutCode(text).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target!)) continue;
      const [file, anchor] = target!.split('#') as [string, string | undefined];
      const resolved = file ? path.join(path.dirname(path.join(ROOT, page)), file) : path.join(ROOT, page);
      if (!existsSync(resolved)) {
        broken.push(`${page}: ${target} (no such file)`);
        continue;
      }
      if (anchor && resolved.endsWith('.md') && !anchorsOf(readFileSync(resolved, 'utf8')).has(anchor))
        broken.push(`${page}: ${target} (no such heading)`);
    }
  }
  expect(broken).toEqual([]);
});

it('README.md keeps the sections other documents and checks refer to', () => {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const headings = [...readme.matchAll(/^#{2,3} (.+)$/gm)].map((match) => match[1]);
  for (const name of [
    'Quick start',
    'Channels',
    'Telegram',
    'Slack',
    'WhatsApp',
    'Google Chat',
    'Discord',
    'Matrix',
    'Web',
    'Terminal',
    'Memory',
    'Security',
    'Learned skills',
    'Your data',
    'Tests',
    'Design notes',
  ])
    expect(headings, name).toContain(name);
  expect(readme).toContain('npm test');
});

it('docs/DESIGN.md names the owner of every table the migrations create', () => {
  const design = readFileSync(path.join(ROOT, 'docs/DESIGN.md'), 'utf8');
  const start = design.indexOf('## 4. Who owns which table');
  const section = design.slice(start, design.indexOf('\n## ', start + 1));
  const named = new Set([...section.matchAll(/`([a-z_]+)`/g)].map((match) => match[1]));
  const tables = readdirSync(path.join(ROOT, 'migrations'))
    .filter((name) => name.endsWith('.sql'))
    .flatMap((name) => [
      ...readFileSync(path.join(ROOT, 'migrations', name), 'utf8').matchAll(
        /CREATE TABLE (?:IF NOT EXISTS )?([a-z_]+)/gi,
      ),
    ])
    .map((match) => match[1]!);
  const missing = [...new Set(tables)].filter((table) => !named.has(table));
  expect(missing, 'add these tables to docs/DESIGN.md §4 with the folder that owns them').toEqual([]);
});

it('finds a setting without a description and a variable naming no setting', () => {
  const schema = z.object({
    port: z.number().default(3000).describe('Listen port.'),
    limits: z.object({ turns: z.number().default(8) }).default({ turns: 8 }),
  });
  expect(
    configDocProblems(schema, [
      { name: 'PORT', key: 'port' },
      { name: 'HOSTNAME', key: 'hostname' },
    ]),
  ).toEqual([
    "limits.turns has no description: add .describe('…') to it in src/config",
    'HOSTNAME names hostname, which is not a setting',
  ]);
});
