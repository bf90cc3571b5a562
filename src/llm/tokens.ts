import { Tiktoken } from 'js-tiktoken/lite';
import o200kBase from 'js-tiktoken/ranks/o200k_base';
import type { ChatMessage, ContentPart, ToolDefinition } from './types.ts';

/*
 * Token counts use OpenAI's o200k_base encoding. For other providers' models (Claude, Gemini,
 * Llama…) they are an estimate, usually within 10–20 % — good enough for budgets, not billing.
 */

let encoder: Tiktoken | null = null;

/** Building the encoder parses ~200k ranks; do it once, on first use. */
function getEncoder(): Tiktoken {
  encoder ??= new Tiktoken(o200kBase);
  return encoder;
}

/** Special-token text such as `<|endoftext|>` is counted as ordinary text, never rejected. */
function encode(text: string): number[] {
  return getEncoder().encode(text, [], []);
}

/** Tokens in `text` (o200k_base; an estimate for non-OpenAI models). */
export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  return encode(text).length;
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
  const tokens = encode(text);
  if (tokens.length <= maxTokens) return text;
  return getEncoder()
    .decode(tokens.slice(0, maxTokens))
    .replace(/\uFFFD+$/, '');
}
