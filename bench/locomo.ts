import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/*
 * LoCoMo (Maharana et al., ACL 2024; github.com/snap-research/locomo, data/locomo10.json,
 * CC BY-NC 4.0 — for evaluation only): long two-person conversations with questions and the
 * dialog turns that hold their evidence. Read from a directory of JSON files, each either one
 * conversation (`{speaker_a, speaker_b, session_N, session_N_date_time, qa}`, as the shared dev
 * split has them) or the original file's array of samples (`[{sample_id, conversation, qa}]`).
 * The authors' annotations (observations, summaries, events) are never read.
 */

export type LocomoTurn = {
  diaId: string;
  speaker: string;
  text: string;
  /** The caption of a photo shared with the turn. */
  caption?: string;
  session: number;
  /** As the data has it, e.g. `1:56 pm on 8 May, 2023`. */
  sessionDate: string;
};

/** 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop (5, adversarial, is not loaded). */
export type LocomoCategory = 1 | 2 | 3 | 4;

export type LocomoQuestion = {
  question: string;
  category: LocomoCategory;
  /** Evidence turn ids that name a turn of the conversation (the few that name none are dropped). */
  evidence: string[];
};

export type LocomoConversation = {
  id: string;
  speakers: [string, string];
  turns: LocomoTurn[];
  questions: LocomoQuestion[];
};

export const CATEGORY_NAMES: Record<LocomoCategory, string> = {
  1: 'multi-hop',
  2: 'temporal',
  3: 'open-domain',
  4: 'single-hop',
};

type RawTurn = { speaker?: unknown; dia_id?: unknown; text?: unknown; blip_caption?: unknown };
type RawQa = { question?: unknown; category?: unknown; evidence?: unknown };

/**
 * Every conversation in `dir` (its `*.json` files, sorted by name). Throws with the file's name
 * when a file is not LoCoMo data.
 */
export function loadLocomo(dir: string): LocomoConversation[] {
  const files = readdirSync(dir)
    .filter((file) => file.endsWith('.json'))
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  const out: LocomoConversation[] = [];
  for (const file of files) {
    const data: unknown = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
    const samples = Array.isArray(data) ? data : [data];
    for (const [index, sample] of samples.entries()) {
      const record = sample as Record<string, unknown>;
      const conversation = (record.conversation ?? record) as Record<string, unknown>;
      const id = String(
        record.sample_id ?? (samples.length === 1 ? path.basename(file, '.json') : `${file}#${index}`),
      ).replace(/^conv-/, '');
      out.push(parseConversation(id, conversation, record.qa, file));
    }
  }
  return out;
}

function parseConversation(
  id: string,
  conversation: Record<string, unknown>,
  qa: unknown,
  file: string,
): LocomoConversation {
  const speakerA = conversation.speaker_a;
  const speakerB = conversation.speaker_b;
  if (typeof speakerA !== 'string' || typeof speakerB !== 'string' || !Array.isArray(qa)) {
    throw new Error(`${file}: not LoCoMo data (expected speaker_a, speaker_b, session_N and qa)`);
  }
  const sessions = Object.keys(conversation)
    .map((key) => /^session_(\d+)$/.exec(key)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
  const turns: LocomoTurn[] = [];
  for (const session of sessions) {
    const sessionDate = String(conversation[`session_${session}_date_time`] ?? '');
    for (const raw of conversation[`session_${session}`] as RawTurn[]) {
      const turn: LocomoTurn = {
        diaId: String(raw.dia_id),
        speaker: String(raw.speaker),
        text: String(raw.text ?? ''),
        session,
        sessionDate,
      };
      if (typeof raw.blip_caption === 'string' && raw.blip_caption.trim()) turn.caption = raw.blip_caption;
      turns.push(turn);
    }
  }
  const known = new Set(turns.map((turn) => turn.diaId));
  const questions: LocomoQuestion[] = [];
  for (const raw of qa as RawQa[]) {
    const category = Number(raw.category);
    if (category !== 1 && category !== 2 && category !== 3 && category !== 4) continue;
    const evidence = (Array.isArray(raw.evidence) ? raw.evidence : [])
      .map(String)
      .filter((e) => known.has(e));
    if (evidence.length === 0) continue;
    questions.push({ question: String(raw.question), category, evidence });
  }
  return { id, speakers: [speakerA, speakerB], turns, questions };
}

/** The memory a turn becomes: `[<dia_id>] (<session date>) <speaker>: <text>` (+ the photo), whitespace collapsed. */
export function turnMemory(turn: LocomoTurn): string {
  const photo = turn.caption ? ` [shared a photo: ${turn.caption}]` : '';
  return `[${turn.diaId}] (${turn.sessionDate}) ${turn.speaker}: ${turn.text}${photo}`
    .replace(/\s+/g, ' ')
    .trim();
}

/** The dialog ids (`D3:12`) a result text shows. */
export function shownDiaIds(text: string): string[] {
  return [...text.matchAll(/\[(D\d+:\d+)\]/g)].map((match) => match[1]!);
}

/** LOCOMO_DIR, else the shared dev split beside the checkout when present; null when neither exists. */
export function locomoDir(root: string): string | null {
  const candidates = process.env.LOCOMO_DIR
    ? [process.env.LOCOMO_DIR]
    : [path.join(root, '..', 'shared', 'data', 'locomo-dev')];
  return candidates.find((dir) => existsSync(dir) && statSync(dir).isDirectory()) ?? null;
}
