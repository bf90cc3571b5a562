import { decodeTokens, encodeTokens } from './bpe.ts';
import type { ChatMessage, ContentPart, ToolDefinition } from './types.ts';

/*
 * Token counts use OpenAI's o200k_base encoding. For other providers' models (Claude, Gemini,
 * Llama…) they are an estimate, usually within 10–20 % — good enough for budgets, not billing.
 */

/** Tokens in `text` (o200k_base; an estimate for non-OpenAI models). Special-token text counts as text. */
export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  let total = 0;
  for (const tokens of encodeTokens(text)) total += tokens.length;
  return total;
}

/** Slices of at most SLICE characters, cut after whitespace where there is some. */
const SLICE = 2_000;

function* slices(text: string): Generator<string> {
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + SLICE);
    if (end < text.length) {
      const space = Math.max(text.lastIndexOf(' ', end), text.lastIndexOf('\n', end));
      if (space > start + SLICE / 2) end = space + 1;
    }
    yield text.slice(start, end);
    start = end;
  }
}

/**
 * Like countTokens, but yields to the event loop between slices of a long text, so a huge
 * message never holds the process for more than a few milliseconds at a time.
 */
export async function countTokensAsync(text: string): Promise<number> {
  if (text.length <= SLICE) return countTokens(text);
  let total = 0;
  for (const slice of slices(text)) {
    total += countTokens(slice);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return total;
}

/** OpenAI's chat format adds a few tokens per message (role, separators) and primes the reply. */
const TOKENS_PER_MESSAGE = 3;
const TOKENS_PER_REPLY = 3;

/** Rough audio sizing: bytes per second of audio by format, and tokens per second of audio. */
const AUDIO_BYTES_PER_SECOND: Record<string, number> = {
  wav: 32_000,
  flac: 20_000,
  mp3: 16_000,
  ogg: 12_000,
};
const AUDIO_TOKENS_PER_SECOND = 32;

function countPartTokens(part: ContentPart): number {
  if (part.type === 'text') return countTokens(part.text);
  const bytes = Math.floor((part.input_audio.data.length * 3) / 4);
  const seconds = bytes / (AUDIO_BYTES_PER_SECOND[part.input_audio.format] ?? 16_000);
  return Math.ceil(seconds * AUDIO_TOKENS_PER_SECOND);
}

function countContentTokens(content: string | ContentPart[] | null): number {
  if (content === null) return 0;
  if (typeof content === 'string') return countTokens(content);
  let total = 0;
  for (const part of content) total += countPartTokens(part);
  return total;
}

/**
 * Prompt tokens a list of messages costs, including per-message framing (an estimate for
 * non-OpenAI models; audio parts are estimated from their size).
 */
export function countMessageTokens(messages: readonly ChatMessage[]): number {
  if (messages.length === 0) return 0;
  let total = TOKENS_PER_REPLY;
  for (const message of messages) {
    total += TOKENS_PER_MESSAGE + countTokens(message.role);
    total += countContentTokens(message.content);
    if (message.role === 'assistant') {
      for (const call of message.toolCalls ?? [])
        total += countTokens(call.name) + countTokens(call.rawArguments);
    }
    if (message.role === 'tool') total += countTokens(message.toolCallId);
  }
  return total;
}

/** Tokens the tool definitions cost, serialized as on the wire (an estimate for non-OpenAI models). */
export function countToolTokens(tools: readonly ToolDefinition[]): number {
  let total = 0;
  for (const tool of tools) {
    const wire = {
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    };
    total += countTokens(JSON.stringify(wire));
  }
  return total;
}

/** `text` cut to at most `maxTokens` tokens (whole tokens; a split character is dropped). */
export function truncateToTokens(text: string, maxTokens: number): string {
  if (maxTokens <= 0) return '';
  const kept: number[] = [];
  for (const tokens of encodeTokens(text)) {
    if (kept.length + tokens.length > maxTokens) {
      kept.push(...tokens.slice(0, maxTokens - kept.length));
      return decodeTokens(kept).replace(/\uFFFD+$/, '');
    }
    kept.push(...tokens);
  }
  return text;
}
