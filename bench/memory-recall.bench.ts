import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/index.ts';
import { type Database, migrate, openPglite } from '../src/db/index.ts';
import { silentLogger } from '../src/logging/logger.ts';
import { searchMemories } from '../src/memory/index.ts';
import { createRuntime, type Runtime } from '../src/runtime.ts';
import { formatCommand } from '../src/skills/protocol/index.ts';
import { ensureUser } from '../src/users/index.ts';
import { type Bench, type BenchSection, ms, percentile } from './lib.ts';
import {
  CATEGORY_NAMES,
  type LocomoCategory,
  type LocomoConversation,
  loadLocomo,
  locomoDir,
  shownDiaIds,
  turnMemory,
} from './locomo.ts';
import { BEFORE_LABEL, loadSearchBefore, type SearchBefore } from './memory-recall-before.ts';

/*
 * Recall of memory.search on LoCoMo's long conversations, the way it is measured from outside:
 * every dialog turn saved in order as one memory of one user (one user per conversation) with
 * `memory.save --content TEXT --category context`, every question of categories 1–4 asked with
 * `memory.search --query QUESTION --limit 10`, both through the skill executor as `steward run`
 * runs them; a hit is an evidence dia_id among the ids the result lines show. Beside it, on the
 * same saved memories: the ranking of the baseline commit, run from its own checkout
 * (memory-recall-before.ts), and plain BM25 over
 * the same tokens (the memories' search_vector lexemes), computed here.
 *
 * LOCOMO_DIR: a directory of LoCoMo JSON files (default ../shared/data/locomo-dev beside the
 * checkout). LOCOMO_ONLY=30,41 measures only those conversations; LOCOMO_MISSES=FILE writes the
 * questions the current search missed, with what it returned, for study.
 */

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const RANKINGS = ['before', 'now', 'bm25'] as const;
type Ranking = (typeof RANKINGS)[number];
const RANKING_LABELS: Record<Ranking, string> = {
  before: BEFORE_LABEL,
  now: 'now: memory.search',
  bm25: 'plain BM25 (k1 1.2, b 0.75), same tokens',
};
const LIMIT = 10;

type Asked = {
  conversation: string;
  question: string;
  category: LocomoCategory;
  evidence: string[];
  /** Per ranking: the dia ids shown, best first. */
  shown: Record<Ranking, string[]>;
};

/**
 * Per ranking, the ranking function alone; and the whole `memory.search` skill call for "now".
 * Wall time, and for "now" and the skill call the process's CPU time too (PGlite runs in this
 * process, so it is the search's own work, whatever else loads the machine).
 */
type Timings = Record<Ranking, number[]> & { skill: number[]; skillCpu: number[]; nowCpu: number[] };

/** CPU milliseconds (user + system) this process spent since `since`. */
const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

const bench: Bench = async () => {
  const dir = locomoDir(ROOT);
  if (!dir) {
    return {
      title: 'Memory recall (LoCoMo)',
      description:
        'Not measured: no LoCoMo data. Set LOCOMO_DIR to a directory holding data/locomo10.json of ' +
        'github.com/snap-research/locomo (CC BY-NC 4.0, for evaluation), or one JSON file per conversation.',
      columns: ['ranking'],
      rows: [],
    };
  }
  const only = process.env.LOCOMO_ONLY?.split(',').map((id) => id.trim());
  const conversations = loadLocomo(dir).filter((c) => !only || only.includes(c.id));
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'steward-recall-bench-'));
  const db = await openPglite(path.join(dataDir, 'db'));
  const asked: Asked[] = [];
  const timings: Timings = { before: [], now: [], bm25: [], skill: [], skillCpu: [], nowCpu: [] };
  const stored = new Map<string, { turns: number; memories: number; saveMs: number }>();
  let runtime: Runtime | null = null;
  const searchBefore = await loadSearchBefore();
  const rankings = RANKINGS.filter((ranking) => ranking !== 'before' || searchBefore);
  try {
    await migrate(db);
    const config = loadConfig({ env: { STEWARD_DATA_DIR: dataDir }, cwd: dataDir });
    runtime = await createRuntime(config, { database: db, logger: silentLogger() });
    for (const conversation of conversations) {
      process.stderr.write(`bench: memory-recall: conversation ${conversation.id}\n`);
      stored.set(conversation.id, await saveTurns(runtime, db, conversation));
      asked.push(...(await askQuestions(runtime, db, conversation, timings, searchBefore)));
    }
  } finally {
    await runtime?.close();
    await db.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  if (process.env.LOCOMO_MISSES) writeMisses(process.env.LOCOMO_MISSES, asked);
  return sections(dir, conversations, asked, timings, stored, rankings);
};

const userOf = (conversation: LocomoConversation) => `locomo-${conversation.id}`;

/** What `steward run` does: one command through the executor, as the CLI user. */
async function run(runtime: Runtime, userId: string, command: string): Promise<string> {
  const outcome = await runtime.executor.execute({
    command,
    caller: { kind: 'cli' },
    user: { id: userId, timezone: 'UTC' },
    channel: 'cli',
    confirmed: true,
  });
  if (outcome.status !== 'ok') throw new Error(`${command.slice(0, 80)}…: ${outcome.content}`);
  return outcome.content;
}

async function saveTurns(runtime: Runtime, db: Database, conversation: LocomoConversation) {
  const userId = userOf(conversation);
  await ensureUser(db, userId, { timezone: 'UTC' });
  const started = performance.now();
  for (const turn of conversation.turns) {
    await run(
      runtime,
      userId,
      formatCommand('memory.save', { content: turnMemory(turn), category: 'context' }),
    );
  }
  const saveMs = performance.now() - started;
  const [row] = await db.query<{ count: number }>(
    'SELECT count(*)::int AS count FROM memory_entries WHERE user_id = $1 AND archived_at IS NULL',
    [userId],
  );
  return { turns: conversation.turns.length, memories: Number(row?.count ?? 0), saveMs };
}

async function askQuestions(
  runtime: Runtime,
  db: Database,
  conversation: LocomoConversation,
  timings: Timings,
  searchBefore: SearchBefore | null,
): Promise<Asked[]> {
  const userId = userOf(conversation);
  const bm25 = await bm25Index(db, userId);
  const contents = new Map(
    (
      await db.query<{ id: string; content: string }>(
        'SELECT id, content FROM memory_entries WHERE user_id = $1',
        [userId],
      )
    ).map((row) => [row.id, row.content]),
  );
  const idsShown = (ids: readonly string[]) => ids.flatMap((id) => shownDiaIds(contents.get(id) ?? ''));
  const out: Asked[] = [];
  for (const question of conversation.questions) {
    const command = formatCommand('memory.search', { query: question.question, limit: String(LIMIT) });
    let started = performance.now();
    let cpu = process.cpuUsage();
    const content = await run(runtime, userId, command);
    timings.skillCpu.push(cpuMs(cpu));
    timings.skill.push(performance.now() - started);

    started = performance.now();
    cpu = process.cpuUsage();
    await searchMemories(db, userId, { query: question.question, limit: LIMIT }, { touch: false });
    timings.nowCpu.push(cpuMs(cpu));
    timings.now.push(performance.now() - started);
    // The first line says how many were found and how; the result lines follow.
    const now = content.split('\n').slice(1).flatMap(shownDiaIds);

    started = performance.now();
    const before = searchBefore ? idsShown(await searchBefore(db, userId, question.question, LIMIT)) : [];
    if (searchBefore) timings.before.push(performance.now() - started);

    started = performance.now();
    const plain = idsShown(await bm25.search(question.question, LIMIT));
    timings.bm25.push(performance.now() - started);

    out.push({
      conversation: conversation.id,
      question: question.question,
      category: question.category,
      evidence: question.evidence,
      shown: { before, now, bm25: plain },
    });
  }
  return out;
}

const BM25_K1 = 1.2;
const BM25_B = 0.75;

/**
 * Plain BM25 over the user's memories as full-text search tokenizes them (the lexemes of
 * search_vector, with their counts), the query tokenized by the same `to_tsvector('english')`.
 */
async function bm25Index(db: Database, userId: string) {
  const rows = await db.query<{ id: string; lexeme: string; tf: number }>(
    `SELECT m.id, t.lexeme, coalesce(array_length(t.positions, 1), 1) AS tf
     FROM memory_entries m, unnest(m.search_vector) t
     WHERE m.user_id = $1 AND m.archived_at IS NULL`,
    [userId],
  );
  const docs = new Map<string, Map<string, number>>();
  const df = new Map<string, number>();
  for (const row of rows) {
    const terms = docs.get(row.id) ?? new Map<string, number>();
    docs.set(row.id, terms);
    terms.set(row.lexeme, Number(row.tf));
    df.set(row.lexeme, (df.get(row.lexeme) ?? 0) + 1);
  }
  const lengths = new Map(
    [...docs].map(([id, terms]) => [id, [...terms.values()].reduce((a, b) => a + b, 0)]),
  );
  const average = [...lengths.values()].reduce((a, b) => a + b, 0) / Math.max(1, docs.size);
  return {
    async search(query: string, limit: number): Promise<string[]> {
      const terms = (
        await db.query<{ lexeme: string }>("SELECT DISTINCT lexeme FROM unnest(to_tsvector('english', $1))", [
          query,
        ])
      ).map((row) => row.lexeme);
      const scores: Array<{ id: string; score: number }> = [];
      for (const [id, doc] of docs) {
        let score = 0;
        for (const term of terms) {
          const tf = doc.get(term);
          if (!tf) continue;
          const n = df.get(term) ?? 0;
          const idf = Math.log(1 + (docs.size - n + 0.5) / (n + 0.5));
          const norm = tf + BM25_K1 * (1 - BM25_B + (BM25_B * (lengths.get(id) ?? 0)) / average);
          score += (idf * tf * (BM25_K1 + 1)) / norm;
        }
        if (score > 0) scores.push({ id, score });
      }
      scores.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
      return scores.slice(0, limit).map((hit) => hit.id);
    },
  };
}

const mean = (samples: readonly number[]) => samples.reduce((a, b) => a + b, 0) / Math.max(1, samples.length);

function recall(asked: readonly Asked[], ranking: Ranking, k: number): number {
  if (asked.length === 0) return Number.NaN;
  const hits = asked.filter((a) => a.shown[ranking].slice(0, k).some((id) => a.evidence.includes(id)));
  return hits.length / asked.length;
}

const cell = (asked: readonly Asked[], ranking: Ranking) =>
  `${recall(asked, ranking, 5).toFixed(3)} / ${recall(asked, ranking, 10).toFixed(3)}`;

function sections(
  dir: string,
  conversations: readonly LocomoConversation[],
  asked: readonly Asked[],
  timings: Timings,
  stored: ReadonlyMap<string, { turns: number; memories: number; saveMs: number }>,
  rankings: readonly Ranking[],
): BenchSection[] {
  const categories = [1, 2, 3, 4] as const;
  const byCategory = (category: LocomoCategory) => asked.filter((a) => a.category === category);
  const overall: BenchSection = {
    title: 'Memory recall (LoCoMo, dev conversations)',
    description:
      `${conversations.length} LoCoMo conversations from ${path.relative(ROOT, dir) || dir} (` +
      `${conversations.map((c) => c.id).join(', ')}): every turn saved in order as one memory of one user per ` +
      'conversation (`memory.save --content "[D1:3] (1:56 pm on 8 May, 2023) Jon: …" --category context` through ' +
      'the skill executor, as `steward run` does), then every question of categories 1–4 asked as ' +
      '`memory.search --query QUESTION --limit 10`. A hit: an evidence dia_id among the ids the results show. ' +
      'Cells: recall@5 / recall@10. No embedding model (full text only).',
    columns: [
      'ranking',
      'questions',
      'all',
      ...categories.map((c) => `${c} ${CATEGORY_NAMES[c]} (${byCategory(c).length})`),
      'ranking p50 / p95',
      'memory.search call p50 / p95',
      'CPU per ranking / call (mean)',
    ],
    rows: rankings.map((ranking) => [
      RANKING_LABELS[ranking],
      asked.length,
      cell(asked, ranking),
      ...categories.map((c) => cell(byCategory(c), ranking)),
      `${ms(percentile(timings[ranking], 50))} / ${ms(percentile(timings[ranking], 95))}`,
      ranking === 'now' ? `${ms(percentile(timings.skill, 50))} / ${ms(percentile(timings.skill, 95))}` : '—',
      ranking === 'now' ? `${ms(mean(timings.nowCpu))} / ${ms(mean(timings.skillCpu))}` : '—',
    ]),
    notes: [
      'Ranking: the search function alone on the same memories (searchMemories now; before, the baseline checkout’s own searchMemories; ' +
        'plain BM25 in this process over lexemes read once per conversation). memory.search call: the whole skill ' +
        'call through the executor as `steward run` makes it (parse, flags, handler, execution log row).',
      'Now: each text read with its neighbours (transcript lines of one conversation, ±2 places, 0.7 / 0.3 of a ' +
        'term’s weight), ×1.6 for the speaker the question names, ×2 for the days it names, irregular and informal ' +
        'word forms; see README → Memory.',
      'The embedded database (PGlite) with no VACUUM after the saves, as a fresh install has it.',
    ],
  };
  const perConversation: BenchSection = {
    title: 'Memory recall (LoCoMo, dev conversations), per conversation',
    description: 'The same run, per conversation. Cells: recall@5 / recall@10.',
    columns: ['conversation', 'turns', 'memories', 'questions', ...rankings, 'save, per turn'],
    rows: conversations.map((conversation) => {
      const mine = asked.filter((a) => a.conversation === conversation.id);
      const info = stored.get(conversation.id);
      return [
        `${conversation.id} (${conversation.speakers.join(' & ')})`,
        info?.turns ?? 0,
        info?.memories ?? 0,
        mine.length,
        ...rankings.map((ranking) => cell(mine, ranking)),
        info ? ms(info.saveMs / Math.max(1, info.turns)) : '',
      ];
    }),
    notes: [
      'memories < turns: `memory.save` merged near-identical turns of a session (≥ 80% of words shared, e.g. two ' +
        '"Thanks!" on the same date), as it does for any user.',
    ],
  };
  return [overall, perConversation];
}

function writeMisses(file: string, asked: readonly Asked[]) {
  const misses = asked
    .filter((a) => !a.shown.now.some((id) => a.evidence.includes(id)))
    .map((a) => ({ ...a, bm25Hit: a.shown.bm25.some((id) => a.evidence.includes(id)) }));
  writeFileSync(file, `${JSON.stringify(misses, null, 1)}\n`);
}

export default bench;
