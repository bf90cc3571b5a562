/** The chat exports `steward memory import` reads. */
export const HISTORY_FORMATS = ['jsonl', 'chatgpt', 'whatsapp', 'telegram'] as const;
export type HistoryFormat = (typeof HISTORY_FORMATS)[number];

/** One message of an imported history, whatever the export it came from. */
export type HistoryMessage = {
  /** The conversation it belongs to, unique within the export. */
  conversation: string;
  /** The conversation's name, when the export gives one. */
  title: string | null;
  /** Unique within its conversation and stable between exports, so importing twice adds nothing. */
  id: string;
  at: Date;
  /** Who wrote it; null for the user themself when the export says so (ChatGPT's "user"). */
  speaker: string | null;
  role: 'user' | 'assistant';
  text: string;
};

/** An export read into messages, and what was left out and why (counted by reason). */
export type ParsedHistory = {
  format: HistoryFormat;
  messages: HistoryMessage[];
  skipped: Record<string, number>;
};

export type ParseResult = { ok: true; history: ParsedHistory } | { ok: false; error: string };

export function skip(skipped: Record<string, number>, reason: string): void {
  skipped[reason] = (skipped[reason] ?? 0) + 1;
}
