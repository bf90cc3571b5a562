import type { Role } from '../config/index.ts';

/** Anthropic-style prompt-cache breakpoint, passed through by OpenRouter. */
export type CacheControl = { type: 'ephemeral'; ttl?: '5m' | '1h' };

export type TextPart = { type: 'text'; text: string; cache_control?: CacheControl };
export type AudioPart = {
  type: 'input_audio';
  input_audio: { data: string; format: 'wav' | 'mp3' | 'ogg' | 'flac' };
};
export type ContentPart = TextPart | AudioPart;

/** A tool call as the model wrote it; `arguments` is the parsed JSON object. */
export type ToolCall = {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  /** The arguments as sent back to the provider in the history: always valid JSON. */
  rawArguments: string;
  /** The model's JSON was invalid and was repaired: tell the model, with its result. */
  argumentsNote?: string;
  /** The model's JSON was invalid beyond repair: this is the call's result; do not run it. */
  argumentsError?: string;
};

export type ChatMessage =
  | { role: 'system'; content: string | TextPart[] }
  | { role: 'user'; content: string | ContentPart[] }
  | { role: 'assistant'; content: string | null; toolCalls?: ToolCall[] }
  | {
      role: 'tool';
      toolCallId: string;
      content: string;
      /** A cache breakpoint on this result (sent as one text part carrying cache_control). */
      cacheControl?: CacheControl;
    };

export type JsonSchema = Record<string, unknown>;

export type ToolDefinition = {
  name: string;
  description: string;
  parameters: JsonSchema;
  /** Marks the end of the cacheable prefix on the last tool. */
  cacheControl?: CacheControl;
};

/** Ties a call to what caused it, for the llm_calls table and the turn's usage. */
export type CallContext = {
  turnId?: string | null;
  executionId?: string | null;
  conversationId?: string | null;
  userId?: string | null;
};

export type ChatRequest = {
  role: Role;
  /** Overrides the role's model; the role's fallbacks still apply. */
  model?: string;
  messages: ChatMessage[];
  tools?: ToolDefinition[];
  toolChoice?: 'auto' | 'none' | 'required';
  temperature?: number;
  maxTokens?: number;
  /** Ask for a JSON object (OpenAI `response_format: {type: 'json_object'}`). */
  json?: boolean;
  /** OpenRouter's `session_id` (sticky routing, better cache hits): the conversation id. */
  sessionId?: string;
  signal?: AbortSignal;
  /** When set, the call streams and each text delta is passed here as it arrives. */
  onDelta?: (text: string) => void;
  context?: CallContext;
};

export type Usage = {
  promptTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
  completionTokens: number;
  /** US dollars, from the roster's prices. */
  cost: number;
};

export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter' | 'other';

export type ChatResponse = {
  /** The model that answered (after any fallback). */
  model: string;
  text: string;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  usage: Usage;
  latencyMs: number;
};

export type EmbedRequest = { texts: string[]; model?: string; signal?: AbortSignal; context?: CallContext };
export type EmbedResponse = { model: string; vectors: number[][]; usage: Usage };

/**
 * Every failure of an LLM call falls in one class. `rate_limit`, `provider_down`, `timeout`
 * and `bad_response` are retried and then tried on the role's fallback models.
 */
export type LlmErrorClass =
  | 'auth'
  | 'credits'
  | 'rate_limit'
  | 'context_length'
  | 'provider_down'
  | 'timeout'
  | 'bad_response'
  | 'bad_request'
  | 'not_configured'
  | 'aborted';

/** One attempt, successful or not, as stored in llm_calls. */
export type LlmCallRecord = CallContext & {
  role: Role;
  model: string;
  usage: Usage;
  latencyMs: number;
  errorClass?: LlmErrorClass;
  error?: string;
};

/** Receives every attempt. Must not throw; a failure to record never fails the call. */
export type UsageRecorder = (record: LlmCallRecord) => void | Promise<void>;

/**
 * The seam to every model. Implementations throw `LlmError` (never a raw SDK error) after
 * retries and fallbacks are exhausted; they honour `signal`.
 */
export interface LlmClient {
  chat(request: ChatRequest): Promise<ChatResponse>;
  embed(request: EmbedRequest): Promise<EmbedResponse>;
}
