import type { Queryable } from '../db/index.ts';
import { MESSAGE_COLUMNS, type MessageRow, type StoredMessage, toStoredMessage } from './conversations.ts';

/*
 * A conversation's history as a turn reads it (its newest `limit` messages after the summary's
 * last fold), kept between turns so that a turn reads only the messages added since the last one
 * instead of hundreds again (the read was a third of a turn's database time on PGlite).
 *
 * Nothing kept is trusted: every read returns, in the same statement and snapshot, the version tag
 * of every message in the kept id range — its `xmin` (the transaction that wrote this version of
 * the row) and `ctid` (where that version lies), which PostgreSQL changes whenever a row is
 * updated. The kept copy is used only when those tags are exactly the ones it was read with: a
 * message changed, deleted or written again (a restore) makes the history be read whole again.
 * Messages added after the kept range come with the read itself.
 */

/** Which history a turn reads: the newest `limit` messages after message `afterId`. */
export type HistoryRange = { afterId: number; limit: number };

/** Parameter positions of HistoryWindows.sql's expression. */
export type HistorySqlParams = {
  conversationId: number;
  afterId: number;
  limit: number;
  /** The kept id range (0 and 0 when nothing is kept). */
  from: number;
  through: number;
};

type Kept = {
  range: HistoryRange;
  messages: StoredMessage[];
  /** Each message's version tag, by position. */
  tags: string[];
  /** Each message's size in characters (charsOf), by position, and their sum. */
  sizes: number[];
  chars: number;
};

type ReadJson = [string | null, Array<MessageRow & { tag: string }> | null];

/** What a kept history may hold in all, in characters of text (content, context, tool calls). */
const DEFAULT_MAX_CHARS = 4_000_000;

const charsOf = (message: StoredMessage) =>
  message.content.length +
  (message.context?.length ?? 0) +
  (message.toolCalls ? JSON.stringify(message.toolCalls).length : 0);

const tagList = (ids: readonly number[], tags: readonly string[]) =>
  ids.map((id, index) => `${id}:${tags[index]}`).join(' ');

/**
 * The histories of recently active conversations, least recently used out first once they hold
 * more than `maxChars` characters. Use one per turn engine; a conversation's history is read
 * under its lock, so two reads of one conversation never interleave.
 */
export class HistoryWindows {
  readonly #kept = new Map<string, Kept>();
  readonly #maxChars: number;
  #chars = 0;

  constructor(maxChars = DEFAULT_MAX_CHARS) {
    this.#maxChars = maxChars;
  }

  /**
   * SQL of a scalar expression: the version tags of the conversation's messages after `afterId`
   * in the kept range, and (as JSON, with their tags) its newest `limit` messages after both.
   * `$n` are parameter positions; `params` gives their values.
   */
  static sql(at: HistorySqlParams): string {
    const { conversationId: c, afterId: a, limit: l, from: f, through: t } = at;
    return `json_build_array(
       (SELECT string_agg(id::text || ':' || xmin::text || ctid::text, ' ' ORDER BY id) FROM messages
        WHERE conversation_id = $${c} AND id > $${a} AND id BETWEEN $${f} AND $${t}),
       (SELECT json_agg(added ORDER BY added.id) FROM (
          SELECT ${MESSAGE_COLUMNS}, xmin::text || ctid::text AS tag FROM messages
          WHERE conversation_id = $${c} AND id > greatest($${a}::bigint, $${t}::bigint)
          ORDER BY id DESC LIMIT $${l}) added))`;
  }

  /**
   * The values of `from` and `through` for a read of `range`: the kept ids, or nothing. A kept
   * history shorter than its limit held every message after the fold when it was read, so its
   * range starts at the fold: a message with a lower id that became visible since (written by a
   * transaction that committed after that read) is then seen too.
   */
  keptIds(conversationId: string, range: HistoryRange): [number, number] {
    const kept = this.#usable(conversationId, range);
    if (!kept || kept.messages.length === 0) return [0, 0];
    return [kept.messages.length < range.limit ? 0 : kept.messages[0]!.id, kept.messages.at(-1)!.id];
  }

  /**
   * The history, from what HistoryWindows.sql returned (read with keptIds' values) and what is
   * kept; null when the kept messages had changed (read again: nothing is kept for it now).
   */
  settle(conversationId: string, range: HistoryRange, json: unknown): StoredMessage[] | null {
    const [tags, added] = (json ?? [null, null]) as ReadJson;
    const kept = this.#usable(conversationId, range);
    const start = kept ? kept.messages.findIndex((message) => message.id > range.afterId) : -1;
    const keptMessages = kept && start >= 0 ? kept.messages.slice(start) : [];
    const keptTags = kept && start >= 0 ? kept.tags.slice(start) : [];
    const keptSizes = kept && start >= 0 ? kept.sizes.slice(start) : [];
    const expected = tagList(
      keptMessages.map((message) => message.id),
      keptTags,
    );
    if ((tags ?? '') !== expected) {
      this.forget(conversationId);
      return null;
    }
    const rows = added ?? [];
    const addedMessages = rows.map(toStoredMessage);
    const messages = [...keptMessages, ...addedMessages].slice(-range.limit);
    const allTags = [...keptTags, ...rows.map((row) => row.tag)].slice(-range.limit);
    // Only the added messages are measured; the kept ones were when they came.
    const sizes = [...keptSizes, ...addedMessages.map(charsOf)].slice(-range.limit);
    this.#keep(conversationId, {
      range,
      messages,
      tags: allTags,
      sizes,
      chars: sizes.reduce((sum, size) => sum + size, 0),
    });
    return [...messages];
  }

  /** Reads the conversation's history, with what is kept: one statement (two when it had changed). */
  async read(db: Queryable, conversationId: string, range: HistoryRange): Promise<StoredMessage[]> {
    for (;;) {
      const [from, through] = this.keptIds(conversationId, range);
      const [row] = await db.query<{ history: unknown }>(
        `SELECT ${HistoryWindows.sql({ conversationId: 1, afterId: 2, limit: 3, from: 4, through: 5 })} AS history`,
        [conversationId, range.afterId, range.limit, from, through],
      );
      const messages = this.settle(conversationId, range, row?.history);
      if (messages) return messages;
    }
  }

  /** Drops what is kept of a conversation. */
  forget(conversationId: string): void {
    const kept = this.#kept.get(conversationId);
    if (!kept) return;
    this.#chars -= kept.chars;
    this.#kept.delete(conversationId);
  }

  /**
   * What is kept of the conversation if it can serve `range`: read with the same limit, and a
   * summary folded no further back (a later fold only drops kept messages).
   */
  #usable(conversationId: string, range: HistoryRange): Kept | undefined {
    const kept = this.#kept.get(conversationId);
    if (!kept || kept.range.limit !== range.limit || range.afterId < kept.range.afterId) return undefined;
    return kept;
  }

  #keep(conversationId: string, kept: Kept): void {
    this.forget(conversationId);
    if (kept.chars > this.#maxChars) return;
    this.#kept.set(conversationId, kept);
    this.#chars += kept.chars;
    for (const [id, oldest] of this.#kept) {
      if (this.#chars <= this.#maxChars) break;
      this.#chars -= oldest.chars;
      this.#kept.delete(id);
    }
  }
}
