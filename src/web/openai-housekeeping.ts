import { randomBytes } from 'node:crypto';
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { type ChatMessage, type LlmClient, LlmError } from '../llm/index.ts';

/*
 * Chat clients ask their model for chores besides the user's messages: a title for the chat,
 * tags, follow-up suggestions, autocompletion. Sent to /v1/chat/completions they are not the
 * user talking to Steward: they are answered by the model alone — no turn, no conversation,
 * no skills, no memory — and nothing of them is stored but the call's usage.
 */

export type HousekeepingKind =
  | 'title'
  | 'tags'
  | 'follow_ups'
  | 'autocomplete'
  | 'search_queries'
  | 'emoji'
  | 'language'
  | 'task';

/**
 * The opening words of the prompts the clients write (Open WebUI's task templates, LibreChat's
 * title prompts), by what they ask for. Matched at the start of a system message or of the
 * last user message, never anywhere in a person's text.
 */
const OPENINGS: ReadonlyArray<{ kind: HousekeepingKind; opening: RegExp }> = [
  // LibreChat (@librechat/agents): titleMethod "structured", then "completion".
  {
    kind: 'title',
    opening:
      /^Analyze this conversation and provide:\s*\n1\. The detected language of the conversation\s*\n2\. A concise title/,
  },
  { kind: 'title', opening: /^Provide a concise, 5-word-or-less title for the conversation/ },
  // LibreChat's older clients: the title prompt and its function-calling variant (system messages).
  { kind: 'title', opening: /^Write a concise title for this conversation in the given language/ },
  {
    kind: 'title',
    opening:
      /^In this environment you have access to a set of tools you can use to generate the conversation title/,
  },
  { kind: 'language', opening: /^Detect the language used in the following text\.?$/ },
  // Open WebUI's emoji reaction of a voice call.
  {
    kind: 'emoji',
    opening: /^Your task is to reflect the speaker's likely facial expression through a fitting emoji/,
  },
];

/** Open WebUI's task templates: `### Task:` first, the chat history fenced in `<chat_history>`. */
const OPEN_WEBUI_TASKS: ReadonlyArray<{ kind: HousekeepingKind; task: RegExp }> = [
  { kind: 'title', task: /^Generate a concise(, 3-5 word)? title/ },
  { kind: 'tags', task: /^Generate 1-3 broad tags/ },
  { kind: 'follow_ups', task: /^Suggest 3-5 relevant follow-up questions/ },
  { kind: 'autocomplete', task: /^You are an autocompletion system/ },
  { kind: 'search_queries', task: /search quer/ },
];

type WireMessage = { role?: unknown; content?: unknown };

function textOf(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return null;
  return (content as Array<{ type?: unknown; text?: unknown }>)
    .filter((part) => part && part.type === 'text' && typeof part.text === 'string')
    .map((part) => part.text as string)
    .join('\n');
}

function kindOf(text: string): HousekeepingKind | null {
  const trimmed = text.trimStart();
  for (const { kind, opening } of OPENINGS) if (opening.test(trimmed)) return kind;
  const task = /^### Task:\s*\n?([^\n]*)/.exec(trimmed);
  if (task && trimmed.includes('<chat_history>') && trimmed.includes('</chat_history>')) {
    const line = task[1]!.trim();
    return OPEN_WEBUI_TASKS.find((entry) => entry.task.test(line))?.kind ?? 'task';
  }
  return null;
}

/** What chore a request is, or null when it is a person's message for Steward. */
export function housekeepingKind(messages: unknown): HousekeepingKind | null {
  if (!Array.isArray(messages)) return null;
  const wire = messages as WireMessage[];
  const lastUser = wire.findLast((message) => message?.role === 'user');
  const candidates = [...wire.filter((message) => message?.role === 'system'), lastUser];
  for (const message of candidates) {
    const text = message ? textOf(message.content) : null;
    const kind = text ? kindOf(text) : null;
    if (kind) return kind;
  }
  return null;
}

/** The client's messages as they are, text only (a chore never needs Steward's context). */
function plainMessages(messages: WireMessage[]): ChatMessage[] {
  return messages.flatMap((message): ChatMessage[] => {
    const text = textOf(message?.content);
    if (text === null) return [];
    if (message.role === 'system' || message.role === 'developer') return [{ role: 'system', content: text }];
    if (message.role === 'assistant') return [{ role: 'assistant', content: text }];
    if (message.role === 'user') return [{ role: 'user', content: text }];
    return [];
  });
}

/** A chore's answer is short: a title, a few tags or questions. */
const HOUSEKEEPING_MAX_TOKENS = 500;

/**
 * Answers a chore with one plain completion of the orchestrator's model, in the OpenAI shape
 * the client asked for (`stream` or not). Stores nothing but the call's usage (user, no turn).
 * A model that fails is answered 503 with what went wrong.
 */
export async function housekeepingResponse(
  c: Context,
  deps: { llm: LlmClient; model: string; created: number },
  request: { userId: string; messages: WireMessage[]; stream: boolean; includeUsage: boolean },
): Promise<Response> {
  let response: Awaited<ReturnType<LlmClient['chat']>>;
  try {
    response = await deps.llm.chat({
      role: 'orchestrator',
      messages: plainMessages(request.messages),
      maxTokens: HOUSEKEEPING_MAX_TOKENS,
      signal: c.req.raw.signal,
      context: { userId: request.userId },
    });
  } catch (error) {
    if (!(error instanceof LlmError)) throw error;
    // LlmError messages are written for people and carry no secrets.
    const body = { message: error.message, type: 'server_error', param: null, code: error.code };
    return c.json({ error: body }, 503);
  }
  const id = `chatcmpl-${randomBytes(12).toString('hex')}`;
  const usage = {
    prompt_tokens: response.usage.promptTokens,
    completion_tokens: response.usage.completionTokens,
    total_tokens: response.usage.promptTokens + response.usage.completionTokens,
    prompt_tokens_details: { cached_tokens: response.usage.cachedTokens },
  };
  const base = { id, created: deps.created, model: deps.model, system_fingerprint: null };
  if (!request.stream) {
    return c.json({
      ...base,
      object: 'chat.completion',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: response.text, refusal: null },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage,
    });
  }
  return streamSSE(c, async (sse) => {
    const chunk = (delta: Record<string, unknown>, finish: string | null) =>
      sse.writeSSE({
        data: JSON.stringify({
          ...base,
          object: 'chat.completion.chunk',
          choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
          ...(request.includeUsage ? { usage: null } : {}),
        }),
      });
    await chunk({ role: 'assistant', content: '', refusal: null }, null);
    if (response.text) await chunk({ content: response.text }, null);
    await chunk({}, 'stop');
    if (request.includeUsage)
      await sse.writeSSE({
        data: JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [], usage }),
      });
    await sse.writeSSE({ data: '[DONE]' });
  });
}
