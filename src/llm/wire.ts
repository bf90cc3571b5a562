import { jsonrepair } from 'jsonrepair';
import { classifyStatus } from './classify.ts';
import { LlmError } from './errors.ts';
import type {
  CacheControl,
  ChatMessage,
  ChatRequest,
  ContentPart,
  FinishReason,
  TextPart,
  ToolCall,
  ToolDefinition,
} from './types.ts';
import type { TokenCounts } from './usage.ts';

/*
 * Our ChatRequest ↔ the OpenAI chat-completions wire format (which OpenRouter, Ollama, vLLM
 * and LM Studio speak), including OpenRouter's extensions: `cache_control` on text parts and
 * tools, and `session_id`.
 */

type WireToolCall = { id: string; type: 'function'; function: { name: string; arguments: string } };

export type WireMessage =
  | { role: 'system'; content: string | TextPart[] }
  | { role: 'user'; content: string | ContentPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: WireToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string | TextPart[] };

export type WireTool = {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
  cache_control?: CacheControl;
};

export type WireChatBody = {
  model: string;
  messages: WireMessage[];
  tools?: WireTool[];
  tool_choice?: 'auto' | 'none' | 'required';
  temperature?: number;
  max_tokens?: number;
  response_format?: { type: 'json_object' };
  session_id?: string;
  stream?: true;
  stream_options?: { include_usage: true };
};

function copyCacheControl(cacheControl: CacheControl): CacheControl {
  return cacheControl.ttl ? { type: cacheControl.type, ttl: cacheControl.ttl } : { type: cacheControl.type };
}

function toWireTextPart(part: TextPart): TextPart {
  const wire: TextPart = { type: 'text', text: part.text };
  if (part.cache_control) wire.cache_control = copyCacheControl(part.cache_control);
  return wire;
}

function toWirePart(part: ContentPart): ContentPart {
  if (part.type === 'text') return toWireTextPart(part);
  return {
    type: 'input_audio',
    input_audio: { data: part.input_audio.data, format: part.input_audio.format },
  };
}

export function toWireMessage(message: ChatMessage): WireMessage {
  switch (message.role) {
    case 'system':
      return {
        role: 'system',
        content: typeof message.content === 'string' ? message.content : message.content.map(toWireTextPart),
      };
    case 'user':
      return {
        role: 'user',
        content: typeof message.content === 'string' ? message.content : message.content.map(toWirePart),
      };
    case 'assistant': {
      const wire: WireMessage = { role: 'assistant', content: message.content };
      if (message.toolCalls && message.toolCalls.length > 0) {
        wire.tool_calls = message.toolCalls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: call.rawArguments || JSON.stringify(call.arguments) },
        }));
      }
      return wire;
    }
    case 'tool':
      return {
        role: 'tool',
        tool_call_id: message.toolCallId,
        content: message.cacheControl
          ? [{ type: 'text', text: message.content, cache_control: copyCacheControl(message.cacheControl) }]
          : message.content,
      };
  }
}

export function toWireTool(tool: ToolDefinition): WireTool {
  const wire: WireTool = {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
  if (tool.cacheControl) wire.cache_control = copyCacheControl(tool.cacheControl);
  return wire;
}

export function toWireBody(request: ChatRequest, model: string): WireChatBody {
  const body: WireChatBody = { model, messages: request.messages.map(toWireMessage) };
  if (request.tools && request.tools.length > 0) body.tools = request.tools.map(toWireTool);
  if (request.toolChoice) body.tool_choice = request.toolChoice;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
  if (request.json) body.response_format = { type: 'json_object' };
  if (request.sessionId) body.session_id = request.sessionId;
  if (request.onDelta) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}

/** The wire JSON of frozen messages (a conversation's kept history), made once per message. */
const wireJsonOf = new WeakMap<ChatMessage, string>();

function messageJson(message: ChatMessage): string {
  if (!Object.isFrozen(message)) return JSON.stringify(toWireMessage(message));
  let json = wireJsonOf.get(message);
  if (json === undefined) {
    json = JSON.stringify(toWireMessage(message));
    wireJsonOf.set(message, json);
  }
  return json;
}

/**
 * toWireBody's body as JSON text, each message's part made once per message while the message
 * lives: a turn's request repeats its conversation's history, and serializing it again every
 * call was the largest part of the request's cost after the history had been sent once.
 */
export function toWireJson(request: ChatRequest, model: string): string {
  const { model: _model, messages: _messages, ...rest } = toWireBody({ ...request, messages: [] }, model);
  const others = JSON.stringify(rest);
  const messages = request.messages.map(messageJson).join(',');
  return `{"model":${JSON.stringify(model)},"messages":[${messages}]${others === '{}' ? '' : `,${others.slice(1, -1)}`}}`;
}

// ---------------------------------------------------------------------------------------------
// Responses

export type ParsedCompletion = {
  text: string;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  tokens: TokenCounts;
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function badResponse(message: string, model: string): LlmError {
  return new LlmError('bad_response', message, { model });
}

function toCount(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.round(value) : null;
}

/**
 * Token counts from a `usage` object. Cache reads arrive as `prompt_tokens_details.cached_tokens`;
 * cache writes as OpenRouter's `prompt_tokens_details.cache_write_tokens`, or the Anthropic-style
 * top-level `cache_write_tokens` / `cache_creation_input_tokens` some gateways pass through.
 */
export function parseUsage(usage: unknown): TokenCounts {
  if (!isRecord(usage)) return { promptTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, completionTokens: 0 };
  const details = isRecord(usage.prompt_tokens_details) ? usage.prompt_tokens_details : {};
  return {
    promptTokens: toCount(usage.prompt_tokens) ?? toCount(usage.input_tokens) ?? 0,
    completionTokens: toCount(usage.completion_tokens) ?? toCount(usage.output_tokens) ?? 0,
    cachedTokens: toCount(details.cached_tokens) ?? toCount(usage.cache_read_input_tokens) ?? 0,
    cacheWriteTokens:
      toCount(details.cache_write_tokens) ??
      toCount(usage.cache_write_tokens) ??
      toCount(usage.cache_creation_input_tokens) ??
      0,
  };
}

function toFinishReason(value: unknown): FinishReason {
  switch (value) {
    case 'stop':
    case 'tool_calls':
    case 'length':
    case 'content_filter':
      return value;
    case 'function_call':
      return 'tool_calls';
    default:
      return 'other';
  }
}

/**
 * Parses tool-call arguments; an empty string means "no arguments". Invalid JSON from the
 * model is not a failed call: it is repaired when jsonrepair can (the call then says so), and
 * otherwise the call carries `argumentsError`, which the agent loop returns to the model as
 * the tool's result so it can fix its call. `rawArguments` is always valid JSON (it goes back
 * to the provider in the history).
 */
export function parseToolArguments(
  raw: string,
  toolName: string,
): Pick<ToolCall, 'arguments' | 'rawArguments' | 'argumentsNote' | 'argumentsError'> {
  if (raw.trim() === '') return { arguments: {}, rawArguments: '{}' };
  let parsed: unknown;
  let note: string | undefined;
  try {
    parsed = JSON.parse(raw);
  } catch {
    try {
      parsed = JSON.parse(jsonrepair(raw));
      note = `Your arguments for ${toolName} were not valid JSON; they were repaired to ${JSON.stringify(parsed)}. Send valid JSON next time.`;
    } catch {
      return {
        arguments: {},
        rawArguments: '{}',
        argumentsError: `Error: the arguments of your ${toolName} call are not valid JSON and could not be repaired: ${raw.slice(0, 200)}. Call ${toolName} again with a JSON object.`,
      };
    }
  }
  if (!isRecord(parsed)) {
    return {
      arguments: {},
      rawArguments: '{}',
      argumentsError: `Error: the arguments of your ${toolName} call must be a JSON object like {"name": value}, not ${raw.slice(0, 100)}.`,
    };
  }
  return {
    arguments: parsed,
    rawArguments: note ? JSON.stringify(parsed) : raw,
    ...(note ? { argumentsNote: note } : {}),
  };
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (isRecord(part) && typeof part.text === 'string' ? part.text : '')).join('');
}

function parseToolCalls(value: unknown, model: string): ToolCall[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value))
    throw badResponse('The response has a tool_calls field that is not a list', model);
  return value.map((entry, index) => {
    const fn = isRecord(entry) && isRecord(entry.function) ? entry.function : null;
    if (!fn || typeof fn.name !== 'string' || fn.name === '') {
      throw badResponse('The response has a tool call without a function name', model);
    }
    const rawArguments = typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {});
    const id =
      isRecord(entry) && typeof entry.id === 'string' && entry.id !== '' ? entry.id : `call_${index}`;
    return { id, name: fn.name, ...parseToolArguments(rawArguments, fn.name) };
  });
}

/** Some gateways (OpenRouter) answer HTTP 200 with `{error: {code, message}}` when the upstream failed. */
function errorInBody(error: Record<string, unknown>, model: string): LlmError {
  const message = typeof error.message === 'string' ? error.message : 'unknown error';
  const code = Number(error.code);
  const status = Number.isInteger(code) && code >= 400 && code < 600 ? code : null;
  const errorClass = status === null ? 'bad_response' : classifyStatus(status, message);
  return new LlmError(
    errorClass,
    `${model} failed${status === null ? '' : ` with code ${status}`}: ${message}`,
    {
      model,
      status,
    },
  );
}

/** A non-streamed chat completion; throws `bad_response` when it is not one. */
export function parseCompletion(body: unknown, model: string): ParsedCompletion {
  if (!isRecord(body)) throw badResponse('The response body is not a JSON object', model);
  if (isRecord(body.error)) throw errorInBody(body.error, model);
  const choices = body.choices;
  if (!Array.isArray(choices) || choices.length === 0) {
    throw badResponse('The response has no choices', model);
  }
  const choice = choices[0];
  if (!isRecord(choice) || !isRecord(choice.message)) {
    throw badResponse('The response choice has no message', model);
  }
  return {
    text: textOf(choice.message.content),
    toolCalls: parseToolCalls(choice.message.tool_calls, model),
    finishReason: toFinishReason(choice.finish_reason),
    tokens: parseUsage(body.usage),
  };
}

type PartialToolCall = { id: string; name: string; arguments: string };

/**
 * Folds streamed chunks into one completion: text deltas are concatenated (and passed to
 * `onDelta` as they arrive), tool-call deltas are merged by their `index`.
 */
export class StreamAccumulator {
  #text = '';
  #toolCalls = new Map<number, PartialToolCall>();
  #finishReason: unknown = null;
  #usage: unknown = null;
  #sawChoice = false;
  readonly #onDelta: (text: string) => void;
  readonly #model: string;

  constructor(model: string, onDelta: (text: string) => void) {
    this.#model = model;
    this.#onDelta = onDelta;
  }

  add(chunk: unknown): void {
    if (!isRecord(chunk)) return;
    if (isRecord(chunk.usage)) this.#usage = chunk.usage;
    const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
    if (!isRecord(choice)) return;
    this.#sawChoice = true;
    if (choice.finish_reason) this.#finishReason = choice.finish_reason;
    const delta = isRecord(choice.delta) ? choice.delta : {};
    if (typeof delta.content === 'string' && delta.content !== '') {
      this.#text += delta.content;
      this.#onDelta(delta.content);
    }
    if (!Array.isArray(delta.tool_calls)) return;
    for (const [position, entry] of delta.tool_calls.entries()) {
      if (!isRecord(entry)) continue;
      const index = typeof entry.index === 'number' ? entry.index : position;
      const call = this.#toolCalls.get(index) ?? { id: '', name: '', arguments: '' };
      if (typeof entry.id === 'string' && entry.id !== '') call.id = entry.id;
      const fn = isRecord(entry.function) ? entry.function : {};
      if (typeof fn.name === 'string' && fn.name !== '' && call.name === '') call.name = fn.name;
      if (typeof fn.arguments === 'string') call.arguments += fn.arguments;
      this.#toolCalls.set(index, call);
    }
  }

  finish(): ParsedCompletion {
    if (!this.#sawChoice) throw badResponse('The stream ended without any choices', this.#model);
    if (this.#finishReason === null) {
      throw badResponse('The stream ended before the model finished (no finish_reason)', this.#model);
    }
    const toolCalls = [...this.#toolCalls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, call]): ToolCall => {
        if (call.name === '')
          throw badResponse('The stream has a tool call without a function name', this.#model);
        return {
          id: call.id || `call_${index}`,
          name: call.name,
          ...parseToolArguments(call.arguments, call.name),
        };
      });
    return {
      text: this.#text,
      toolCalls,
      finishReason: toFinishReason(this.#finishReason),
      tokens: parseUsage(this.#usage),
    };
  }
}
