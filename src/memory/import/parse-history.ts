import { createHash } from 'node:crypto';
import { zonedToInstant } from '../../time/index.ts';
import { type HistoryFormat, type HistoryMessage, type ParseResult, skip } from './history.ts';

export type ParseOptions = {
  /** The export's file name: WhatsApp names the chat in it. */
  fileName: string;
  /** Default: told by the content. */
  format?: HistoryFormat;
  /** Where the export's local times (WhatsApp, Telegram without Unix times) were written. */
  timeZone: string;
};

/**
 * Reads an exported chat history: a JSONL of `{conversation, at, speaker, text, id}` lines,
 * ChatGPT's `conversations.json`, a WhatsApp chat exported as text, or Telegram Desktop's
 * `result.json`. Bad input is an error value saying what was wrong; never a throw.
 */
export function parseHistory(content: string, options: ParseOptions): ParseResult {
  const format = options.format ?? detectFormat(content);
  if (!format) {
    return {
      ok: false,
      error:
        `${options.fileName}: not a history Steward can read. Give a JSONL file of {conversation, at, speaker, text, id} ` +
        "lines, ChatGPT's conversations.json, a WhatsApp chat exported as .txt, or Telegram's result.json.",
    };
  }
  try {
    switch (format) {
      case 'jsonl':
        return parseJsonl(content, options);
      case 'chatgpt':
        return parseChatGpt(content, options);
      case 'whatsapp':
        return parseWhatsApp(content, options);
      case 'telegram':
        return parseTelegram(content, options);
    }
  } catch (error) {
    return {
      ok: false,
      error: `${options.fileName}: not a valid ${format} export (${(error as Error).message})`,
    };
  }
}

function detectFormat(content: string): HistoryFormat | null {
  const text = content.replace(/^\uFEFF/, '').trimStart();
  if (text.startsWith('[') || text.startsWith('{')) {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      return text.startsWith('{') ? 'jsonl' : null;
    }
    if (Array.isArray(data))
      return data.some((item) => item && typeof item === 'object' && 'mapping' in item) ? 'chatgpt' : null;
    if (data && typeof data === 'object') {
      const record = data as Record<string, unknown>;
      if ('messages' in record || 'chats' in record) return 'telegram';
      if ('mapping' in record) return 'chatgpt';
      if ('text' in record) return 'jsonl';
    }
    return null;
  }
  return WHATSAPP_LINE.test(text.split('\n', 1)[0] ?? '') ? 'whatsapp' : null;
}

const hash = (...parts: string[]) =>
  createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 24);

// --- JSONL --------------------------------------------------------------------------------

function parseJsonl(content: string, options: ParseOptions): ParseResult {
  const messages: HistoryMessage[] = [];
  const skipped: Record<string, number> = {};
  for (const [index, raw] of content.split('\n').entries()) {
    const line = raw.trim();
    if (!line) continue;
    const where = `${options.fileName} line ${index + 1}`;
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return {
        ok: false,
        error: `${where}: not JSON. Each line holds one {conversation, at, speaker, text, id} object.`,
      };
    }
    const text = typeof record.text === 'string' ? record.text.trim() : '';
    if (!text) {
      skip(skipped, 'no text');
      continue;
    }
    const at = new Date(String(record.at ?? ''));
    if (record.at === undefined || Number.isNaN(at.getTime())) {
      return { ok: false, error: `${where}: "at" must be a date and time, e.g. "2024-05-08T13:56:00Z".` };
    }
    const conversation = String(record.conversation ?? 'default');
    const speaker =
      typeof record.speaker === 'string' && record.speaker.trim() ? record.speaker.trim() : null;
    messages.push({
      conversation,
      title: typeof record.title === 'string' ? record.title : conversation,
      id:
        record.id === undefined || record.id === null
          ? hash(at.toISOString(), speaker ?? '', text)
          : String(record.id),
      at,
      speaker,
      role: record.role === 'assistant' ? 'assistant' : 'user',
      text,
    });
  }
  return { ok: true, history: { format: 'jsonl', messages, skipped } };
}

// --- ChatGPT conversations.json ------------------------------------------------------------

type ChatGptNode = {
  parent?: string | null;
  message?: {
    id?: string;
    author?: { role?: string };
    create_time?: number | null;
    content?: { content_type?: string; parts?: unknown[] };
    metadata?: { is_visually_hidden_from_conversation?: boolean };
  } | null;
};
type ChatGptConversation = {
  id?: string;
  conversation_id?: string;
  title?: string;
  create_time?: number;
  current_node?: string;
  mapping?: Record<string, ChatGptNode>;
};

/** The thread the user last saw: from current_node up to the root (edited branches are left out). */
function parseChatGpt(content: string, options: ParseOptions): ParseResult {
  const data = JSON.parse(content) as unknown;
  const conversations = (Array.isArray(data) ? data : [data]) as ChatGptConversation[];
  const messages: HistoryMessage[] = [];
  const skipped: Record<string, number> = {};
  for (const conversation of conversations) {
    const mapping = conversation.mapping ?? {};
    const key =
      conversation.conversation_id ?? conversation.id ?? hash(options.fileName, conversation.title ?? '');
    const thread: ChatGptNode[] = [];
    const seen = new Set<string>();
    for (
      let node = conversation.current_node;
      node && !seen.has(node) && mapping[node];
      node = mapping[node]!.parent ?? undefined
    ) {
      seen.add(node);
      thread.unshift(mapping[node]!);
    }
    for (const node of thread) {
      const message = node.message;
      if (!message) continue;
      const role = message.author?.role;
      if (role !== 'user' && role !== 'assistant') {
        skip(skipped, `${role ?? 'unknown'} messages`);
        continue;
      }
      if (message.metadata?.is_visually_hidden_from_conversation) {
        skip(skipped, 'hidden messages');
        continue;
      }
      const text = (message.content?.parts ?? [])
        .filter((part): part is string => typeof part === 'string')
        .join('\n')
        .trim();
      if (!text) {
        skip(skipped, 'messages without text');
        continue;
      }
      const seconds = message.create_time ?? conversation.create_time;
      if (typeof seconds !== 'number') {
        skip(skipped, 'messages without a time');
        continue;
      }
      messages.push({
        conversation: key,
        title: conversation.title ?? null,
        id: message.id ?? hash(String(seconds), text),
        at: new Date(seconds * 1000),
        speaker: role === 'assistant' ? 'ChatGPT' : null,
        role,
        text,
      });
    }
  }
  return { ok: true, history: { format: 'chatgpt', messages, skipped } };
}

// --- WhatsApp chat export (.txt) -------------------------------------------------------------

/**
 * A message's first line, Android (`31/12/2023, 21:41 - Ana: text`, `12/31/23, 9:41 PM - …`) or
 * iOS (`[31/12/2023, 21:41:05] Ana: text`); dates with `/`, `.` or `-`.
 */
const WHATSAPP_LINE =
  /^[\u200e\u200f]?\[?(\d{1,4})[/.-](\d{1,2})[/.-](\d{1,4}),? (\d{1,2})[:.](\d{2})(?:[:.](\d{2}))?\s?([AaPp]\.?[Mm]\.?)?\]?(?: -|:)? (.*)$/;

function parseWhatsApp(content: string, options: ParseOptions): ParseResult {
  type Line = { parts: number[]; meridiem: string | undefined; rest: string };
  const entries: Array<Line & { text: string[] }> = [];
  for (const raw of content.replace(/^\uFEFF/, '').split(/\r?\n/)) {
    const match = WHATSAPP_LINE.exec(raw);
    if (match) {
      entries.push({
        parts: [1, 2, 3, 4, 5, 6].map((index) => Number(match[index] ?? 0)),
        meridiem: match[7],
        rest: match[8] ?? '',
        text: [],
      });
    } else if (entries.length > 0) {
      entries.at(-1)!.text.push(raw);
    }
  }
  if (entries.length === 0)
    return { ok: false, error: `${options.fileName}: no WhatsApp message lines found.` };
  // Day or month first: a first number above 12 says day first; a second one says month first;
  // otherwise AM/PM (as US phones write) says month first.
  const dayFirst =
    entries.some((entry) => entry.parts[0]! > 12 && entry.parts[0]! <= 31) ||
    !(entries.some((entry) => entry.parts[1]! > 12) || entries.some((entry) => entry.meridiem));
  const title = whatsAppTitle(options.fileName);
  const messages: HistoryMessage[] = [];
  const skipped: Record<string, number> = {};
  const occurrences = new Map<string, number>();
  for (const entry of entries) {
    const sender = /^([^:]{1,80}): ([\s\S]*)$/.exec(entry.rest);
    if (!sender) {
      skip(skipped, 'system notices');
      continue;
    }
    const speaker = sender[1]!.replace(/[\u200e\u200f\u202a-\u202e]/g, '').trim();
    // iOS writes the encryption notice as if the chat had said it.
    if (/^[\u200e\u200f]?Messages and calls are end-to-end encrypted\b/.test(sender[2]!)) {
      skip(skipped, 'system notices');
      continue;
    }
    const text = [sender[2]!, ...entry.text]
      .join('\n')
      .replace(/[\u200e\u200f]/g, '')
      .trim();
    if (
      !text ||
      /^<(Media omitted|attached: .*)>$/i.test(text) ||
      /^(image|video|audio|sticker|GIF) omitted$/i.test(text)
    ) {
      skip(skipped, 'media without text');
      continue;
    }
    const [a, b, c, hour, minute, second] = entry.parts as [number, number, number, number, number, number];
    const yearFirst = a > 31;
    const year = yearFirst ? a : c < 100 ? 2000 + c : c;
    const month = yearFirst ? b : dayFirst ? b : a;
    const day = yearFirst ? c : dayFirst ? a : b;
    let hours = hour;
    if (entry.meridiem) {
      const pm = /^p/i.test(entry.meridiem);
      hours = (hour % 12) + (pm ? 12 : 0);
    }
    const at = zonedTime(year, month, day, hours, minute, second, options.timeZone);
    if (!at) {
      skip(skipped, 'lines with an impossible date');
      continue;
    }
    // WhatsApp gives no ids: the time, sender and text are the message (and which repeat of them).
    const base = hash(at.toISOString(), speaker, text);
    const seen = occurrences.get(base) ?? 0;
    occurrences.set(base, seen + 1);
    messages.push({
      conversation: title,
      title,
      id: seen === 0 ? base : `${base}-${seen}`,
      at,
      speaker,
      role: 'user',
      text,
    });
  }
  return { ok: true, history: { format: 'whatsapp', messages, skipped } };
}

/** "WhatsApp Chat with Ana.txt" → "Ana"; other names as they are, without the extension. */
function whatsAppTitle(fileName: string): string {
  const base = fileName
    .split(/[\\/]/)
    .at(-1)!
    .replace(/\.txt$/i, '');
  return base.replace(/^WhatsApp Chat (with|-) /i, '').trim() || 'WhatsApp chat';
}

/** A wall-clock time in `timeZone` as an instant; null for an impossible date. */
export function zonedTime(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
  timeZone: string,
): Date | null {
  const guess = Date.UTC(year, month - 1, day, hour, minute, second);
  const check = new Date(guess);
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day)
    return null;
  return zonedToInstant({ year, month, day, hour, minute, second }, timeZone);
}

// --- Telegram Desktop result.json ------------------------------------------------------------

type TelegramText = string | { type?: string; text?: string };
type TelegramMessage = {
  id?: number;
  type?: string;
  date?: string;
  date_unixtime?: string;
  from?: string | null;
  text?: TelegramText | TelegramText[];
};
type TelegramChat = { id?: number; name?: string | null; type?: string; messages?: TelegramMessage[] };

/** A one-chat export (`{name, messages}`) or a full one (`{chats: {list: [...]}}`). */
function parseTelegram(content: string, options: ParseOptions): ParseResult {
  const data = JSON.parse(content) as { chats?: { list?: TelegramChat[] } } & TelegramChat;
  const chats = data.chats?.list ?? [data];
  const messages: HistoryMessage[] = [];
  const skipped: Record<string, number> = {};
  for (const chat of chats) {
    const key = String(chat.id ?? chat.name ?? options.fileName);
    const title = chat.name ?? (chat.type === 'saved_messages' ? 'Saved Messages' : null);
    for (const message of chat.messages ?? []) {
      if (message.type !== 'message') {
        skip(skipped, 'service messages');
        continue;
      }
      const parts = Array.isArray(message.text) ? message.text : [message.text ?? ''];
      const text = parts
        .map((part) => (typeof part === 'string' ? part : (part.text ?? '')))
        .join('')
        .trim();
      if (!text) {
        skip(skipped, 'messages without text');
        continue;
      }
      const at = message.date_unixtime
        ? new Date(Number(message.date_unixtime) * 1000)
        : localTelegramTime(message.date, options.timeZone);
      if (!at || Number.isNaN(at.getTime())) {
        skip(skipped, 'messages without a time');
        continue;
      }
      messages.push({
        conversation: key,
        title,
        id: String(message.id ?? hash(at.toISOString(), message.from ?? '', text)),
        at,
        speaker: message.from ?? null,
        role: 'user',
        text,
      });
    }
  }
  return { ok: true, history: { format: 'telegram', messages, skipped } };
}

function localTelegramTime(date: string | undefined, timeZone: string): Date | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})$/.exec(date ?? '');
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return zonedTime(year, month, day, hour, minute, second, timeZone);
}
