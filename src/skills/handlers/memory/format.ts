import type { FoundMessage, Memory } from '../../../memory/index.ts';
import { localMinute } from '../../../time/index.ts';

/** `[id] content · category · importance 0.80 · #tags` — what the model reads. */
export function formatMemoryLine(memory: Memory): string {
  const parts = [
    `[${memory.id}] ${memory.content}`,
    memory.category,
    `importance ${memory.importance.toFixed(2)}`,
  ];
  if (memory.tags.length > 0) parts.push(memory.tags.map((tag) => `#${tag}`).join(' '));
  return parts.join(' · ');
}

/** A message longer than this is shown by its beginning. */
const MAX_MESSAGE_CHARS = 600;

/**
 * `[message 42] 2026-03-01 14:05 · "Flat hunting" (import:whatsapp) · Ana: text` — when (in the
 * user's time zone), which conversation and who said it ("you" and "Steward" when the role
 * tells), then what was said.
 */
export function formatMessageLine(message: FoundMessage, timezone: string): string {
  const who = message.speaker ?? (message.role === 'user' ? 'you' : 'Steward');
  const conversation = message.conversationTitle
    ? `"${message.conversationTitle}" (${message.channel})`
    : `${message.channel} conversation ${message.conversationId}`;
  const text = message.content.replace(/\s+/g, ' ').trim();
  const shown = text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS - 1)}…` : text;
  return `[message ${message.id}] ${localMinute(new Date(message.createdAt), timezone)} · ${conversation} · ${who}: ${shown}`;
}
