import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Database } from '../src/db/index.ts';
import { indexVault, searchContent, VaultFs } from '../src/files/index.ts';
import { type Backend, createTestDatabase } from '../test/support/db.ts';
import { makeDocx, makePdf } from '../test/support/documents.ts';
import { type Bench, type BenchSection, ms, percentile, sample, useBenchDatabase } from './lib.ts';

const INDEXED_FILES = 1_000;
const SEARCH_FILES = 10_000;
const QUERIES = 60;
const WARMUP = 5;
const USER = 'bench';

/** Deterministic pseudo-random numbers (mulberry32). */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'to', 'vi', 'pe', 'do', 'gu', 'ba', 'ze', 'fo', 'hi'];

/** 2,000 pronounceable pseudo-words drawn with a Zipf-like skew, as in real notes. */
function wordSource(seed: number): () => string {
  const random = seeded(seed);
  const words: string[] = [];
  const seen = new Set<string>();
  while (words.length < 2_000) {
    let word = '';
    for (let i = 0; i < 2 + Math.floor(random() * 3); i++)
      word += SYLLABLES[Math.floor(random() * SYLLABLES.length)];
    if (!seen.has(word)) words.push(word);
    seen.add(word);
  }
  return () => words[Math.floor(random() ** 2.5 * words.length)]!;
}

const sentence = (word: () => string, length: number) => Array.from({ length }, word).join(' ');

/** 1,000 files: 60% markdown, 25% plain text, 10% PDF, 5% Word, 0.5–3 KB of text each. */
function writeMixedVault(root: string): void {
  const word = wordSource(11);
  for (let index = 0; index < INDEXED_FILES; index++) {
    const folder = path.join(root, `folder${index % 20}`);
    mkdirSync(folder, { recursive: true });
    const paragraphs = Array.from({ length: 3 + (index % 5) }, () => sentence(word, 40));
    const kind = index % 20;
    if (kind < 12)
      writeFileSync(
        path.join(folder, `note${index}.md`),
        `# ${sentence(word, 4)}\n\n${paragraphs.map((text) => `## ${sentence(word, 3)}\n${text}`).join('\n\n')}`,
      );
    else if (kind < 17) writeFileSync(path.join(folder, `text${index}.txt`), paragraphs.join('\n\n'));
    else if (kind < 19)
      writeFileSync(
        path.join(folder, `scan${index}.pdf`),
        makePdf(paragraphs.map((text) => text.slice(0, 90))),
      );
    else writeFileSync(path.join(folder, `memo${index}.docx`), makeDocx(sentence(word, 4), paragraphs));
  }
}

/** The rest of the 10k rows, inserted directly: the search measure needs rows, not extraction. */
async function fillIndex(db: Database, from: number, to: number): Promise<void> {
  const word = wordSource(23);
  for (let start = from; start < to; start += 500) {
    const rows: string[][] = [];
    for (let index = start; index < Math.min(to, start + 500); index++) {
      rows.push([`filler/${index}.md`, sentence(word, 5), sentence(word, 8), sentence(word, 250)]);
    }
    await db.query(
      `INSERT INTO content_index (user_id, source, path, kind, title, headings, body, size, change_token)
       SELECT $1, 'vault', r.path, 'markdown', r.title, r.headings, r.body, length(r.body), r.path
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS r(path, title, headings, body)`,
      [
        USER,
        rows.map((row) => row[0]),
        rows.map((row) => row[1]),
        rows.map((row) => row[2]),
        rows.map((row) => row[3]),
      ],
    );
  }
  await db.exec('VACUUM ANALYZE content_index');
}

async function measure(
  backend: Backend,
  label: string,
  vault: string,
): Promise<Array<Array<string | number>>> {
  const test = await createTestDatabase(backend);
  try {
    const db = test.database;
    const started = performance.now();
    const report = await indexVault(db, USER, new VaultFs(vault), { maxBytes: 20_000_000 });
    const seconds = (performance.now() - started) / 1000;
    if (report.indexed !== INDEXED_FILES || report.failed > 0)
      throw new Error(`indexed ${JSON.stringify(report)}`);
    await fillIndex(db, INDEXED_FILES, SEARCH_FILES);
    const word = wordSource(42);
    const queries = Array.from({ length: QUERIES + WARMUP }, () => sentence(word, 2));
    let hits = 0;
    for (const query of queries.slice(0, WARMUP)) await searchContent(db, USER, query);
    const durations = await sample(QUERIES, async (index) => {
      hits += (await searchContent(db, USER, queries[WARMUP + index]!)).length;
    });
    return [
      [
        label,
        `index ${INDEXED_FILES.toLocaleString('en-US')} mixed files`,
        `${(INDEXED_FILES / seconds).toFixed(0)} files/s`,
        `${seconds.toFixed(1)} s`,
        '',
      ],
      [
        label,
        `files.search at ${SEARCH_FILES.toLocaleString('en-US')} files`,
        `p50 ${ms(percentile(durations, 50))}`,
        `p95 ${ms(percentile(durations, 95))}`,
        (hits / QUERIES).toFixed(1),
      ],
    ];
  } finally {
    await test.drop();
  }
}

const bench: Bench = async (): Promise<BenchSection> => {
  const vault = mkdtempSync(path.join(os.tmpdir(), 'steward-bench-files-'));
  const notes: string[] = [];
  try {
    writeMixedVault(vault);
    const rows = await measure('pglite', 'PGlite', vault);
    if (await useBenchDatabase()) rows.push(...(await measure('postgres', 'PostgreSQL', vault)));
    else notes.push('No PostgreSQL server answered: PGlite only.');
    return {
      title: 'Content index (files)',
      description: `Indexing ${INDEXED_FILES} files from a vault (60% markdown, 25% text, 10% PDF, 5% DOCX; extraction + upsert) with indexVault, then files.search (searchContent: ranked full text + highlighted snippets, limit 10) over ${SEARCH_FILES} indexed files with ${QUERIES} two-word queries.`,
      columns: ['backend', 'measure', 'rate / p50', 'time / p95', 'mean hits'],
      rows,
      notes: [
        ...notes,
        'Rows beyond the first 1,000 files are inserted directly into content_index (250-word bodies); then VACUUM ANALYZE.',
      ],
    };
  } finally {
    rmSync(vault, { recursive: true, force: true });
  }
};

export default bench;
