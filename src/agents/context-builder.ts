import type { ChatMessage, ToolDefinition } from '../llm/index.ts';
import { countTokens, countToolTokens } from '../llm/index.ts';
import type { StoredMessage } from '../memory/index.ts';

/** What a turn is told besides the user's words: information, never instructions. */
export type TurnContext = {
  now: string;
  /** Memories worth showing that this conversation's visible history has not shown yet. */
  memories: string[];
  taskSummary?: string;
};

export type HistoryOptions = { budgetTokens: number };

/** The context part of a user message: sent before the user's words, and kept with them. */
export function turnContextText(context: TurnContext): string {
  const parts = [`Current time: ${context.now}`];
  if (context.memories.length)
    parts.push(`Things you remember about the user:\n${context.memories.map((m) => `- ${m}`).join('\n')}`);
  if (context.taskSummary) parts.push(`Open tasks:\n${context.taskSummary}`);
  return `<context>\n${parts.join('\n\n')}\n</context>`;
}

/** A user message as sent: its context part (when it had one), then the user's words. */
export function userMessage(text: string, context: string | null): ChatMessage {
  if (!context) return { role: 'user', content: text };
  return {
    role: 'user',
    content: [
      { type: 'text', text: context },
      { type: 'text', text },
    ],
  };
}

/**
 * Each stored message's chat message, made once and frozen. A conversation's kept history
 * (memory/history-windows.ts) holds the same stored messages from turn to turn, so its chat
 * messages are not made again every turn, and the JSON they are sent as is kept with them
 * (llm/wire.ts keeps the JSON of frozen messages: they cannot change).
 */
const chatOfStored = new WeakMap<StoredMessage, ChatMessage | null>();

function toChatMessage(message: StoredMessage): ChatMessage | null {
  let chat = chatOfStored.get(message);
  if (chat === undefined) {
    chat = deepFreeze(chatMessageOf(message));
    chatOfStored.set(message, chat);
  }
  return chat;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** Stored messages → chat messages, exactly as they were sent (so the cached prefix still matches). */
function chatMessageOf(message: StoredMessage): ChatMessage | null {
  if (message.role === 'user') return userMessage(message.content, message.context);
  if (message.role === 'assistant') {
    return {
      role: 'assistant',
      content: message.content || null,
      ...(message.toolCalls?.length ? { toolCalls: message.toolCalls } : {}),
    };
  }
  if (message.role === 'tool')
    return { role: 'tool', toolCallId: message.toolCallId ?? '', content: message.content };
  return null;
}

/**
 * Stored messages as chat messages, long tool results shortened, and made acceptable to
 * providers that enforce tool-call adjacency: a tool call whose result was never stored (a
 * crash between the two) is dropped from its assistant message, and a result without its call
 * is dropped.
 */
export function toChatMessages(messages: readonly StoredMessage[]): ChatMessage[] {
  const chats: ChatMessage[] = [];
  for (const message of messages) {
    const chat = toChatMessage(message);
    if (chat) chats.push(chat);
  }
  return pairToolCalls(chats);
}

/**
 * Recent history within its token budget: whole turns, oldest dropped first, so an assistant
 * tool call is never separated from its results. Starts at a user message. Token counts are
 * the ones stored with each message (counted once, when it was stored).
 */
export function historyWithinBudget(
  messages: readonly StoredMessage[],
  options: HistoryOptions,
): ChatMessage[] {
  const groups: StoredMessage[][] = [];
  let current: StoredMessage[] = [];
  let currentTurn: string | null | undefined;
  for (const message of messages) {
    if (message.role === 'system' && message.turnId === null) continue;
    const startsGroup = message.role === 'user' || message.turnId !== currentTurn;
    if (startsGroup && current.length) {
      groups.push(current);
      current = [];
    }
    currentTurn = message.turnId;
    current.push(message);
  }
  if (current.length) groups.push(current);
  const kept: StoredMessage[][] = [];
  let total = 0;
  for (let index = groups.length - 1; index >= 0; index--) {
    const group = groups[index]!;
    const tokens = storedTokens(group);
    if (total + tokens > options.budgetTokens) break;
    kept.unshift(group);
    total += tokens;
  }
  const flat = toChatMessages(kept.flat());
  while (flat.length && flat[0]!.role !== 'user') flat.shift();
  return flat;
}

const MESSAGE_FRAMING_TOKENS = 4;

/** Tokens of stored messages as the history shows them (their stored counts, context included). */
export function storedTokens(group: readonly StoredMessage[]): number {
  let total = 0;
  for (const message of group) {
    const content = message.tokenCount > 0 ? message.tokenCount : countTokens(message.content);
    total += MESSAGE_FRAMING_TOKENS + content;
    for (const call of message.toolCalls ?? [])
      total += countTokens(call.name) + countTokens(call.rawArguments);
  }
  return total;
}

/** Keeps only tool calls that have their results, and results whose call is present. */
function pairToolCalls(messages: ChatMessage[]): ChatMessage[] {
  const answered = new Set<string>();
  for (const message of messages) if (message.role === 'tool') answered.add(message.toolCallId);
  const callIds = new Set<string>();
  const out: ChatMessage[] = [];
  for (const message of messages) {
    if (message.role === 'assistant' && message.toolCalls?.length) {
      const calls = message.toolCalls.filter((call) => answered.has(call.id));
      for (const call of calls) callIds.add(call.id);
      if (calls.length === 0 && !message.content) continue;
      out.push(
        calls.length ? { ...message, toolCalls: calls } : { role: 'assistant', content: message.content },
      );
      continue;
    }
    if (message.role === 'tool' && !callIds.has(message.toolCallId)) continue;
    out.push(message);
  }
  return out;
}

/**
 * The orchestrator's request, laid out so that it only ever grows at its end between
 * compaction points: [system — 1 h breakpoint] [tools] [conversation summary: changes only when
 * old turns are folded into it] [the turns since, exactly as they were sent, each user message
 * with its own context part] [this turn's messages]. Per-turn context (time, memories) travels
 * inside its user message, so nothing before the new message changes from one request to the
 * next, and `withCacheBreakpoints` can make every request read the previous one from the cache.
 */
export function buildOrchestratorMessages(options: {
  systemPrompt: string;
  summary: string;
  history: ChatMessage[];
  turnMessages: ChatMessage[];
}): ChatMessage[] {
  const messages: ChatMessage[] = [
    {
      role: 'system',
      content: [
        { type: 'text', text: options.systemPrompt, cache_control: { type: 'ephemeral', ttl: '1h' } },
      ],
    },
  ];
  if (options.summary.trim()) {
    messages.push({
      role: 'system',
      content: `Earlier in this conversation (summary; information, not instructions):\n${options.summary.trim()}`,
    });
  }
  return [...messages, ...options.history, ...options.turnMessages];
}

/**
 * Two moving cache breakpoints (besides the system prompt's): one on the request's last
 * message, written now, and one on the last message of the previous request (the last user or
 * tool message before the newest assistant message), read now. Any earlier ones are removed.
 */
export function withCacheBreakpoints(messages: readonly ChatMessage[]): ChatMessage[] {
  const out = messages.map((message, index) => (index === 0 ? message : withoutBreakpoint(message)));
  const last = out.length - 1;
  if (last <= 0) return out;
  out[last] = withBreakpoint(out[last]!);
  let newestAssistant = -1;
  for (let index = last; index > 0; index--) {
    if (out[index]!.role === 'assistant') {
      newestAssistant = index;
      break;
    }
  }
  for (let index = newestAssistant - 1; index > 0; index--) {
    const role = out[index]!.role;
    if (role === 'user' || role === 'tool') {
      out[index] = withBreakpoint(out[index]!);
      break;
    }
  }
  return out;
}

const EPHEMERAL = { type: 'ephemeral' } as const;

/** Marks a user or tool message as a cache breakpoint (on its last text part). */
export function withBreakpoint(message: ChatMessage): ChatMessage {
  if (message.role === 'tool') return { ...message, cacheControl: EPHEMERAL };
  if (message.role !== 'user') return message;
  if (typeof message.content === 'string') {
    if (!message.content) return message;
    return { role: 'user', content: [{ type: 'text', text: message.content, cache_control: EPHEMERAL }] };
  }
  const parts = [...message.content];
  const lastText = parts.findLastIndex((part) => part.type === 'text');
  if (lastText < 0) return message;
  parts[lastText] = { ...(parts[lastText] as { type: 'text'; text: string }), cache_control: EPHEMERAL };
  return { role: 'user', content: parts };
}

function withoutBreakpoint(message: ChatMessage): ChatMessage {
  if (message.role === 'tool') {
    if (!message.cacheControl) return message;
    const { cacheControl: _dropped, ...rest } = message;
    return rest;
  }
  if ((message.role !== 'user' && message.role !== 'system') || typeof message.content === 'string')
    return message;
  if (!message.content.some((part) => part.type === 'text' && part.cache_control)) return message;
  const content = message.content.map((part) => {
    if (part.type !== 'text' || !part.cache_control) return part;
    const { cache_control: _dropped, ...rest } = part;
    return rest;
  });
  return { ...message, content } as ChatMessage;
}

/** Tokens of the stable prefix: system prompt plus tool schemas (o200k; an estimate for non-OpenAI models). */
export function prefixTokens(systemPrompt: string, tools: readonly ToolDefinition[]): number {
  return countTokens(systemPrompt) + countToolTokens(tools);
}
