import { CHANNEL_NAMES } from '../config/index.ts';
import type { Queryable } from '../db/index.ts';
import { type EffectRow, effectsOfTurn } from '../skills/index.ts';
import { type ActionClaim, claimedActions } from './action-claims.ts';

/*
 * Receipts: one line per effect of a turn — `✓` done, `✗` failed, `?` outcome unknown — with the
 * skill and a short identifying detail, written by Steward from the execution records (never by
 * the model, so they cannot be made up), e.g. `✓ tasks.create — Alpha plan (t_4kx9m2qa)`.
 */

export type ReceiptStatus = 'done' | 'failed' | 'unknown';

export type Receipt = {
  skill: string;
  status: ReceiptStatus;
  /** What the effect was about, and for a failed or unknown one why. */
  summary: string;
  /** The execution row behind it; null for a claim in the reply that no call backs ("not run"). */
  executionId: string | null;
};

/** As the JSON APIs carry them: `{skill, status, summary, execution_id}`. */
export type ReceiptJson = {
  skill: string;
  status: ReceiptStatus;
  summary: string;
  execution_id: string | null;
};

export const RECEIPT_MARKS: Readonly<Record<ReceiptStatus, string>> = {
  done: '✓',
  failed: '✗',
  unknown: '?',
};

/** Where `auto` writes receipt lines: the chat channels, the terminal, the dashboard, scheduled runs. */
const LINE_CHANNELS: ReadonlySet<string> = new Set([...CHANNEL_NAMES, 'web', 'cli', 'scheduled']);

/**
 * Whether a reply on `channel` ends with its receipt lines. The JSON surfaces (`api`, `openai`,
 * `voice`) carry receipts as data instead.
 */
export function receiptLinesShown(setting: 'auto' | 'off', channel: string): boolean {
  return setting === 'auto' && LINE_CHANNELS.has(channel);
}

/** The summary of a receipt for a claim with no call behind it. */
export const NOT_RUN = 'not run';

const MAX_REASON = 90;

function shortReason(error: string | null): string {
  const first =
    (error ?? '')
      .replace(/\s+/g, ' ')
      .trim()
      .split(/(?<=[.!?])\s/)[0] ?? '';
  return first.length > MAX_REASON
    ? `${first.slice(0, MAX_REASON - 1).trimEnd()}…`
    : first.replace(/\.$/, '');
}

/** One recorded effect as a receipt. */
export function receiptOf(row: EffectRow): Receipt {
  const detail = row.receipt.trim();
  const withDetail = (suffix: string) => (detail ? `${detail} (${suffix})` : suffix);
  switch (row.status) {
    case 'ok':
      return { skill: row.skill, status: 'done', summary: detail, executionId: row.id };
    case 'refused':
      return {
        skill: row.skill,
        status: 'failed',
        summary: withDetail('not run: the safety check stopped it'),
        executionId: row.id,
      };
    case 'error': {
      const reason = shortReason(row.error);
      return {
        skill: row.skill,
        status: 'failed',
        summary: withDetail(reason ? `failed: ${reason}` : 'failed'),
        executionId: row.id,
      };
    }
    default:
      // running (a crash), unknown (stopped half-way), timeout: it may or may not have happened.
      return {
        skill: row.skill,
        status: 'unknown',
        summary: withDetail('may have happened — check'),
        executionId: row.id,
      };
  }
}

/** The receipts of a turn's recorded effects, in the order they started. */
export async function recordedReceipts(database: Queryable, turnId: string): Promise<Receipt[]> {
  return (await effectsOfTurn(database, turnId)).map(receiptOf);
}

/**
 * Receipts for what `text` claims was done that no call of the turn backs: a claim whose
 * domain has a `done` receipt is backed; one whose calls failed or are unknown is already
 * contradicted by their lines; one with no call at all gets `✗ <skill> — not run`.
 */
export function unbackedClaims(text: string, receipts: readonly Receipt[]): Receipt[] {
  const added: Receipt[] = [];
  const backs = (claim: ActionClaim, receipt: Receipt) =>
    claim.backedBy.some((name) =>
      name.endsWith('.*') ? receipt.skill.startsWith(name.slice(0, -1)) : receipt.skill === name,
    );
  for (const claim of claimedActions(text)) {
    if (receipts.some((receipt) => backs(claim, receipt))) continue;
    if (added.some((receipt) => receipt.skill === claim.notRunSkill)) continue;
    added.push({ skill: claim.notRunSkill, status: 'failed', summary: NOT_RUN, executionId: null });
  }
  return added;
}

/**
 * Markdown punctuation a summary may hold, escaped so every channel shows it as written. An
 * underscore inside a word (`t_4kx9m2qa`) never starts emphasis, so it stays as it is.
 */
export function escapeMarkdown(text: string): string {
  return text
    .replace(/`/g, "'")
    .replace(/[\\*~[\]]/g, (char) => `\\${char}`)
    .replace(/(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])/g, '\\_');
}

/** One receipt as a line of markdown: `✓ tasks.create — Alpha plan (t_4kx9m2qa)`. */
export function receiptLine(receipt: Receipt): string {
  const mark = RECEIPT_MARKS[receipt.status];
  return receipt.summary
    ? `${mark} ${receipt.skill} — ${escapeMarkdown(receipt.summary)}`
    : `${mark} ${receipt.skill}`;
}

/** `text` followed by its receipt lines (a blank line between), or `text` alone when there are none. */
export function withReceiptLines(text: string, receipts: readonly Receipt[]): string {
  if (receipts.length === 0) return text;
  const lines = receipts.map(receiptLine).join('\n');
  return text.trim() ? `${text.trimEnd()}\n\n${lines}` : lines;
}

const FORGED = /^(\s*)[✓✔✗✘?](\s+[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*)/gmu;

/**
 * The model's text with any line that imitates a receipt (`✓ email.send …`) turned into a plain
 * bullet: receipts come only from Steward's records.
 */
export function withoutForgedReceipts(text: string): string {
  return text.replace(FORGED, '$1-$2');
}

export function receiptsJson(receipts: readonly Receipt[]): ReceiptJson[] {
  return receipts.map((receipt) => ({
    skill: receipt.skill,
    status: receipt.status,
    summary: receipt.summary,
    execution_id: receipt.executionId,
  }));
}

/** Receipts as stored with the turn (JSON), read back; anything malformed is left out. */
export function receiptsFromJson(value: unknown): Receipt[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((item): Receipt[] => {
    const entry = item as Partial<ReceiptJson> | null;
    if (!entry || typeof entry.skill !== 'string' || typeof entry.summary !== 'string') return [];
    if (entry.status !== 'done' && entry.status !== 'failed' && entry.status !== 'unknown') return [];
    return [
      {
        skill: entry.skill,
        status: entry.status,
        summary: entry.summary,
        executionId: typeof entry.execution_id === 'string' ? entry.execution_id : null,
      },
    ];
  });
}
