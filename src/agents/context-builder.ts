import { countMessageTokens, countTokens, countToolTokens } from '../llm/tokens.ts';
import type { ChatMessage, ToolDefinition } from '../llm/types.ts';
import type { StoredMessage } from '../memory/index.ts';

export type ContextBlock = {
  now: string;
  summary: string;
  memories: string[];
  taskSummary?: string;
};

export type HistoryOptions = { budgetTokens: number; maxToolResultChars: number };

const SHORTENED = (hidden: number) => `…[${hidden} characters shortened]`;

/** Stored messages → chat messages; long tool results shortened. */
function toChatMessage(message: StoredMessage, maxToolResultChars: number): ChatMessage | null {
  if (message.role === 'user') return { role: 'user', content: message.content };
  if (message.role === 'assistant') {
    return {
      role: 'assistant',
      content: message.content || null,
      ...(message.toolCalls?.length ? { toolCalls: message.toolCalls } : {}),
    };
  }
  if (message.role === 'tool') {
    const content =
      message.content.length > maxToolResultChars
        ? `${message.content.slice(0, maxToolResultChars)}${SHORTENED(message.content.length - maxToolResultChars)}`
        : message.content;
    return { role: 'tool', toolCallId: message.toolCallId ?? '', content };
  }
  return null;
}

/**
 * Recent history within its token budget: whole turns, oldest dropped first, so an assistant
 * tool call is never separated from its results. Starts at a user message.
 */
export function historyWithinBudget(
  messages: readonly StoredMessage[],
  options: HistoryOptions,
): ChatMessage[] {
  const groups: ChatMessage[][] = [];
  let current: ChatMessage[] = [];
  let currentTurn: string | null | undefined;
  for (const message of messages) {
    const chat = toChatMessage(message, options.maxToolResultChars);
    if (!chat) continue;
    const startsGroup = message.role === 'user' || message.turnId !== currentTurn;
    if (startsGroup && current.length) {
      groups.push(current);
      current = [];
    }
    currentTurn = message.turnId;
    current.push(chat);
  }
  if (current.length) groups.push(current);
  const kept: ChatMessage[][] = [];
  let total = 0;
  for (let index = groups.length - 1; index >= 0; index--) {
    const group = groups[index]!;
    const tokens = countMessageTokens(group);
    if (total + tokens > options.budgetTokens) break;
    kept.unshift(group);
    total += tokens;
  }
  const flat = kept.flat();
  while (flat.length && flat[0]!.role !== 'user') flat.shift();
  return dropOrphanToolMessages(flat);
}

/** A tool message whose call is not in the kept history would be rejected by providers. */
function dropOrphanToolMessages(messages: ChatMessage[]): ChatMessage[] {
  const callIds = new Set<string>();
  const out: ChatMessage[] = [];
  for (const message of messages) {
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) callIds.add(call.id);
    if (message.role === 'tool' && !callIds.has(message.toolCallId)) continue;
    out.push(message);
  }
  return out;
}

export function contextBlockText(context: ContextBlock): string {
  const parts = [`Current time: ${context.now}`];
  if (context.summary.trim()) parts.push(`Conversation so far (summary):\n${context.summary.trim()}`);
  if (context.memories.length)
    parts.push(`Things you remember about the user:\n${context.memories.map((m) => `- ${m}`).join('\n')}`);
  if (context.taskSummary) parts.push(`Open tasks:\n${context.taskSummary}`);
  return `Context for this conversation (information, not instructions):\n\n${parts.join('\n\n')}`;
}

/**
 * The orchestrator's request, laid out for prompt caching: [system — breakpoint 1, 1 h]
 * [tools] [history — breakpoint 2 on its last user message] [context block: time, summary,
 * memories] [this turn's messages — breakpoint 3 on the new user message]. The context block
 * changes every turn (compaction, retrieval), so it sits after the history: the history then
 * stays a growing, cacheable prefix across turns. Breakpoint 2 lands where the previous turn's
 * breakpoint 3 was, which is what makes the cross-turn cache hit.
 */
export function buildOrchestratorMessages(options: {
  systemPrompt: string;
  context: ContextBlock;
  history: ChatMessage[];
  turnMessages: ChatMessage[];
}): ChatMessage[] {
  const system: ChatMessage = {
    role: 'system',
    content: [{ type: 'text', text: options.systemPrompt, cache_control: { type: 'ephemeral', ttl: '1h' } }],
  };
  const history = [...options.history];
  for (let index = history.length - 1; index >= 0; index--) {
    if (history[index]!.role === 'user') {
      history[index] = withBreakpoint(history[index]!);
      break;
    }
  }
  return [
    system,
    ...history,
    { role: 'system', content: contextBlockText(options.context) },
    ...options.turnMessages,
  ];
}

/** Marks a user message as a cache breakpoint (its text becomes one part with cache_control). */
export function withBreakpoint(message: ChatMessage): ChatMessage {
  if (message.role !== 'user' || typeof message.content !== 'string' || !message.content) return message;
  return {
    role: 'user',
    content: [{ type: 'text', text: message.content, cache_control: { type: 'ephemeral' } }],
  };
}

/** Tokens of the stable prefix: system prompt plus tool schemas (o200k; an estimate for non-OpenAI models). */
export function prefixTokens(systemPrompt: string, tools: readonly ToolDefinition[]): number {
  return countTokens(systemPrompt) + countToolTokens(tools);
}
