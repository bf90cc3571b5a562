import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Roster } from '../../src/config/index.ts';
import { OpenAiCompatibleClient, type OpenAiCompatibleClientOptions } from '../../src/llm/openai-client.ts';
import { countTokens as countTokensUncached } from '../../src/llm/tokens.ts';
import type { CacheControl } from '../../src/llm/types.ts';
import type { WireMessage, WireTool } from '../../src/llm/wire.ts';
import { useStarted } from './use-started.ts';

/*
 * A strict, scripted OpenAI-compatible server (chat completions + embeddings) on a real port.
 * A test queues the replies it expects; a request nobody scripted, or a step left unconsumed,
 * fails `assertDone()`. Every request is recorded so a test can check what the model was shown.
 * Usage simulates Anthropic-style prompt caching through OpenRouter, so cache layouts can be
 * tested end to end.
 */

export type FakeToolCall = {
  id?: string;
  name: string;
  /** An object is serialized; a string is sent as is (use it for malformed arguments). */
  arguments: Record<string, unknown> | string;
};

/** Overrides the usage the fake computes. */
export type FakeUsage = {
  promptTokens?: number;
  completionTokens?: number;
  cachedTokens?: number;
  cacheWriteTokens?: number;
};

type StepOptions = {
  /** Delay before answering; defaults to `fake.latencyMs`. */
  latencyMs?: number;
  /** Asserts on the request; a throw answers HTTP 400 with the message and fails `assertDone()`. */
  expect?: (request: FakeRequest) => void;
};

export type FakeReply = StepOptions & {
  text?: string;
  toolCalls?: FakeToolCall[];
  usage?: FakeUsage;
  finishReason?: string;
  /** Pause between streamed chunks. */
  chunkDelayMs?: number;
};

export type FakeFailure = StepOptions &
  (
    | { status: number; retryAfter?: number | string; message?: string }
    | { malformed: true }
    | { noChoices: true }
    | { hang: true }
  );

export type FakeStep = FakeReply | FakeFailure;

export type FakeRequestBody = {
  model?: string;
  messages?: WireMessage[];
  tools?: WireTool[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  input?: string | string[];
  encoding_format?: string;
  [key: string]: unknown;
};

export type FakeRequest = {
  kind: 'chat' | 'embeddings' | 'other';
  method: string;
  path: string;
  /** Lower-cased names. */
  headers: Record<string, string>;
  body: FakeRequestBody;
  /** Wall-clock ms (Date.now) when the request arrived and when its response ended or was dropped. */
  receivedAt: number;
  finishedAt: number | null;
};

export type FakeLlmOptions = {
  /** Dimensions of the embedding vectors (default 64). */
  embeddingDimensions?: number;
  /** Default latency of every answer (default 0). */
  latencyMs?: number;
  /** When set, requests without `Authorization: Bearer <apiKey>` get a 401 that echoes the key sent. */
  apiKey?: string;
  /** Clock of the simulated prompt cache (TTL 5 min, or 1 h with `ttl: '1h'`). */
  now?: () => number;
};

export type FakeLlm = {
  /** Base URL to give the client (ends in /v1). */
  readonly url: string;
  /** Every request, in arrival order. */
  readonly requests: FakeRequest[];
  /** Chat requests only. */
  readonly chatRequests: FakeRequest[];
  /** Problems seen (unexpected requests, failed expectations); `assertDone()` reports them. */
  readonly errors: string[];
  /** Steps still queued. */
  readonly pending: number;
  latencyMs: number;
  /**
   * Milliseconds spent answering requests, from a request's body read to its response's end:
   * the model's own time, which benches take out of the engine's.
   */
  readonly handlingMs: number;
  /** Queues chat steps, consumed one per chat request in order. */
  enqueue(...steps: FakeStep[]): void;
  /** Queues failures for the next embeddings requests; without one, embeddings are answered. */
  enqueueEmbeddings(...failures: FakeFailure[]): void;
  /** Answers chat requests when the queue is empty. */
  respondWith(responder: ((request: FakeRequest) => FakeStep) | null): void;
  /** The deterministic vector the fake returns for `text`. */
  embeddingOf(text: string): number[];
  /** Throws when a step is unconsumed or anything unexpected happened. */
  assertDone(): void;
  reset(): void;
  close(): Promise<void>;
};

const CACHE_TTL_MS = { '5m': 5 * 60_000, '1h': 60 * 60_000 } as const;
const TOKENS_PER_MESSAGE = 4;

const FAILURE_MESSAGES: Record<number, string> = {
  400: 'Invalid request',
  401: 'No auth credentials found',
  402: 'Insufficient credits. Add more using https://openrouter.ai/settings/credits',
  403: 'Forbidden',
  404: 'No endpoints found for this model',
  429: 'Rate limit exceeded: too many requests',
  500: 'Internal Server Error',
  502: 'Provider returned error',
  503: 'Service temporarily unavailable',
};

/**
 * Token counts by text: a prompt repeats the same system prompt, tools and history on every
 * request, and the fake stands in for a model whose own time is not what benches measure.
 */
const tokenCounts = new Map<string, number>();
function countTokens(text: string): number {
  let count = tokenCounts.get(text);
  if (count === undefined) {
    count = countTokensUncached(text);
    if (tokenCounts.size >= 20_000) tokenCounts.clear();
    tokenCounts.set(text, count);
  }
  return count;
}

/** JSON with sorted keys, so equal content always serializes equally. */
function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, inner]) => inner !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, inner]) => `${JSON.stringify(key)}:${stableStringify(inner)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function withoutCacheControl<T extends object>(value: T): Omit<T, 'cache_control'> {
  const { cache_control: _ignored, ...rest } = value as T & { cache_control?: unknown };
  return rest;
}

type Block = { key: string; tokens: number; cacheControl: CacheControl | null };

/** The prompt as cacheable blocks, in cache order: tools, then each message's content parts. */
function promptBlocks(body: FakeRequestBody): Block[] {
  const blocks: Block[] = [];
  for (const tool of body.tools ?? []) {
    const plain = withoutCacheControl(tool);
    blocks.push({
      key: stableStringify({ tool: plain }),
      tokens: countTokens(JSON.stringify(plain)),
      cacheControl: tool.cache_control ?? null,
    });
  }
  for (const message of body.messages ?? []) {
    const head = {
      role: message.role,
      tool_call_id: message.role === 'tool' ? message.tool_call_id : undefined,
    };
    // A string is one text part, as providers read it, so moving a breakpoint onto a message
    // (which turns its content into parts) does not change what is cached.
    const content =
      typeof message.content === 'string'
        ? [{ type: 'text' as const, text: message.content }]
        : message.content;
    if (Array.isArray(content)) {
      content.forEach((part, index) => {
        const plain = withoutCacheControl(part);
        const text = part.type === 'text' ? part.text : JSON.stringify(plain);
        blocks.push({
          key: stableStringify({ ...head, part: plain }),
          tokens: countTokens(text) + (index === 0 ? TOKENS_PER_MESSAGE : 0),
          cacheControl: part.type === 'text' ? (part.cache_control ?? null) : null,
        });
      });
    } else {
      blocks.push({
        key: stableStringify({ ...head, content }),
        tokens: countTokens(content ?? '') + TOKENS_PER_MESSAGE,
        cacheControl: null,
      });
    }
    if (message.role === 'assistant' && message.tool_calls) {
      blocks.push({
        key: stableStringify({ tool_calls: message.tool_calls }),
        tokens: countTokens(JSON.stringify(message.tool_calls)),
        cacheControl: null,
      });
    }
  }
  return blocks;
}

type CacheEntry = { expiresAt: number };

/**
 * Anthropic-style prompt cache: the longest prefix ending at a breakpoint that was written
 * within its TTL is read (and refreshed); every longer breakpoint prefix is written.
 */
function simulateCache(
  blocks: Block[],
  cache: Map<string, CacheEntry>,
  now: number,
): { promptTokens: number; cachedTokens: number; cacheWriteTokens: number } {
  const cumulative: number[] = [];
  const prefixKeys: string[] = [];
  const hash = createHash('sha256');
  let total = 0;
  for (const block of blocks) {
    total += block.tokens;
    cumulative.push(total);
    hash.update(`${block.key}\n`);
    prefixKeys.push(hash.copy().digest('hex'));
  }
  const breakpoints = blocks.flatMap((block, index) => (block.cacheControl ? [index] : []));
  let hit = -1;
  for (const index of [...breakpoints].reverse()) {
    const entry = cache.get(prefixKeys[index]!);
    if (entry && entry.expiresAt > now) {
      hit = index;
      break;
    }
  }
  const ttlOf = (index: number) => CACHE_TTL_MS[blocks[index]!.cacheControl?.ttl ?? '5m'];
  if (hit >= 0) cache.set(prefixKeys[hit]!, { expiresAt: now + ttlOf(hit) });
  let written = -1;
  for (const index of breakpoints) {
    if (index <= hit) continue;
    cache.set(prefixKeys[index]!, { expiresAt: now + ttlOf(index) });
    written = index;
  }
  const cachedTokens = hit >= 0 ? cumulative[hit]! : 0;
  const cacheWriteTokens = written >= 0 ? cumulative[written]! - cachedTokens : 0;
  return { promptTokens: total, cachedTokens, cacheWriteTokens };
}

function hashWord(word: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < word.length; index++) {
    hash ^= word.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Bag-of-words hashed into `dimensions`, L2-normalized: texts sharing words have a higher cosine. */
export function bagOfWordsVector(text: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const hash = hashWord(word);
    vector[hash % dimensions]! += hash & 0x80000000 ? -1 : 1;
  }
  const norm = Math.hypot(...vector);
  if (norm === 0) {
    vector[0] = 1;
    return vector;
  }
  return vector.map((value) => value / norm);
}

function isFailure(step: FakeStep): step is FakeFailure {
  return 'status' in step || 'malformed' in step || 'noChoices' in step || 'hang' in step;
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (response.destroyed) return;
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

function sendError(
  response: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
) {
  sendJson(response, status, { error: { code: status, message } }, headers);
}

/** Starts the fake on 127.0.0.1 at a free port. */
export async function startFakeLlm(options: FakeLlmOptions = {}): Promise<FakeLlm> {
  // Building the tokenizer takes ~1.5 s; pay it here, not inside a test's first (timed) request.
  countTokens('warm up');
  const dimensions = options.embeddingDimensions ?? 64;
  const cacheClock = options.now ?? Date.now;
  const queue: FakeStep[] = [];
  const embeddingQueue: FakeFailure[] = [];
  const requests: FakeRequest[] = [];
  const errors: string[] = [];
  const cache = new Map<string, CacheEntry>();
  const hanging = new Set<ServerResponse>();
  let responder: ((request: FakeRequest) => FakeStep) | null = null;
  let sequence = 0;

  const defaultLatencyMs = options.latencyMs ?? 0;
  // Assigned below, once the server listens; handlers only run after that.
  let fake: FakeLlm;

  async function answerFailure(
    response: ServerResponse,
    failure: FakeFailure,
    stream: boolean,
    model: string,
  ) {
    if ('hang' in failure) {
      hanging.add(response);
      response.on('close', () => hanging.delete(response));
      return;
    }
    if ('status' in failure) {
      const headers: Record<string, string> = {};
      if (failure.retryAfter !== undefined) headers['retry-after'] = String(failure.retryAfter);
      const message = failure.message ?? FAILURE_MESSAGES[failure.status] ?? `HTTP ${failure.status}`;
      sendError(response, failure.status, message, headers);
      return;
    }
    if ('malformed' in failure) {
      if (stream) {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.end('data: {"id":"chatcmpl-broken","choices":[{"delta":\n\n');
      } else {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('{"id":"chatcmpl-broken","choices":[');
      }
      return;
    }
    const empty = {
      id: `chatcmpl-fake-${++sequence}`,
      object: 'chat.completion',
      created: 0,
      model,
      choices: [],
    };
    if (stream) {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(
        `data: ${JSON.stringify({ ...empty, object: 'chat.completion.chunk' })}\n\ndata: [DONE]\n\n`,
      );
    } else {
      sendJson(response, 200, empty);
    }
  }

  async function answerReply(response: ServerResponse, reply: FakeReply, request: FakeRequest) {
    const body = request.body;
    const model = body.model ?? 'fake';
    const id = `chatcmpl-fake-${++sequence}`;
    const text = reply.text ?? (reply.toolCalls?.length ? '' : 'ok');
    const toolCalls = (reply.toolCalls ?? []).map((call, index) => ({
      id: call.id ?? `call_fake_${sequence}_${index}`,
      type: 'function' as const,
      function: {
        name: call.name,
        arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
      },
    }));
    const finishReason = reply.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop');
    const simulated = simulateCache(promptBlocks(body), cache, cacheClock());
    const completionTokens =
      countTokens(text) + toolCalls.reduce((sum, call) => sum + countTokens(call.function.arguments) + 3, 0);
    const promptTokens = reply.usage?.promptTokens ?? simulated.promptTokens;
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: reply.usage?.completionTokens ?? completionTokens,
      total_tokens: promptTokens + (reply.usage?.completionTokens ?? completionTokens),
      prompt_tokens_details: {
        cached_tokens: reply.usage?.cachedTokens ?? simulated.cachedTokens,
        cache_write_tokens: reply.usage?.cacheWriteTokens ?? simulated.cacheWriteTokens,
      },
    };
    const created = Math.floor(Date.now() / 1000);
    if (!body.stream) {
      const message = {
        role: 'assistant',
        content: text === '' && toolCalls.length > 0 ? null : text,
        refusal: null,
        ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
      };
      sendJson(response, 200, {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason }],
        usage,
      });
      return;
    }
    const includeUsage = body.stream_options?.include_usage === true;
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices,
      ...(includeUsage ? { usage: null } : {}),
      ...extra,
    });
    const delta = (value: Record<string, unknown>, finish: string | null = null) => ({
      index: 0,
      delta: value,
      logprobs: null,
      finish_reason: finish,
    });
    const chunks: unknown[] = [chunk([delta({ role: 'assistant', content: '' })])];
    for (const piece of text.match(/\S+\s*|\s+/g) ?? []) chunks.push(chunk([delta({ content: piece })]));
    toolCalls.forEach((call, index) => {
      chunks.push(
        chunk([
          delta({
            tool_calls: [
              { index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } },
            ],
          }),
        ]),
      );
      for (const piece of call.function.arguments.match(/[\s\S]{1,8}/g) ?? []) {
        chunks.push(chunk([delta({ tool_calls: [{ index, function: { arguments: piece } }] })]));
      }
    });
    chunks.push(chunk([delta({}, finishReason)]));
    if (includeUsage) chunks.push(chunk([], { usage }));
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const item of chunks) {
      if (response.destroyed) return;
      response.write(`data: ${JSON.stringify(item)}\n\n`);
      if (reply.chunkDelayMs) await delay(reply.chunkDelayMs);
    }
    if (!response.destroyed) response.end('data: [DONE]\n\n');
  }

  async function answerEmbeddings(response: ServerResponse, request: FakeRequest) {
    const failure = embeddingQueue.shift();
    await delay(failure?.latencyMs ?? fake.latencyMs);
    if (failure) {
      await answerFailure(response, failure, false, request.body.model ?? 'fake');
      return;
    }
    const input = request.body.input;
    const texts = typeof input === 'string' ? [input] : Array.isArray(input) ? input : [];
    const base64 = request.body.encoding_format === 'base64';
    sendJson(response, 200, {
      object: 'list',
      model: request.body.model ?? 'fake',
      data: texts.map((text, index) => {
        const vector = bagOfWordsVector(String(text), dimensions);
        const embedding = base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector;
        return { object: 'embedding', index, embedding };
      }),
      usage: {
        prompt_tokens: texts.reduce((sum, text) => sum + countTokens(String(text)), 0),
        total_tokens: texts.reduce((sum, text) => sum + countTokens(String(text)), 0),
      },
    });
  }

  async function answerChat(response: ServerResponse, request: FakeRequest) {
    let step: FakeStep | undefined = queue.shift();
    if (!step && responder) {
      try {
        step = responder(request);
      } catch (error) {
        const message = `respondWith threw: ${(error as Error).message}`;
        errors.push(message);
        sendError(response, 400, `fake LLM: ${message}`);
        return;
      }
    }
    if (!step) {
      const last = request.body.messages?.at(-1);
      const summary = last ? JSON.stringify(last.content).slice(0, 200) : '(no messages)';
      const message = `unexpected chat request #${requests.length} (no step queued) for model ${request.body.model}; last message: ${summary}`;
      errors.push(message);
      sendError(response, 500, `fake LLM: ${message}`);
      return;
    }
    if (step.expect) {
      try {
        step.expect(request);
      } catch (error) {
        const message = `expectation failed on chat request #${requests.length}: ${(error as Error).message}`;
        errors.push(message);
        sendError(response, 400, `fake LLM: ${message}`);
        return;
      }
    }
    await delay(step.latencyMs ?? fake.latencyMs);
    const model = request.body.model ?? 'fake';
    if (isFailure(step)) await answerFailure(response, step, request.body.stream === true, model);
    else await answerReply(response, step, request);
  }

  let handlingMs = 0;
  const server = createServer((incoming, response) => {
    void (async () => {
      const receivedAt = Date.now();
      const raw = await readBody(incoming);
      const handlingFrom = performance.now();
      response.on('finish', () => {
        handlingMs += performance.now() - handlingFrom;
      });
      const path = (incoming.url ?? '/').split('?')[0]!.replace(/\/+$/, '');
      const kind = /^(\/v1)?\/chat\/completions$/.test(path)
        ? 'chat'
        : /^(\/v1)?\/embeddings$/.test(path)
          ? 'embeddings'
          : 'other';
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(incoming.headers)) {
        if (value !== undefined)
          headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
      }
      let body: FakeRequestBody = {};
      let parseError: string | null = null;
      try {
        body = raw ? (JSON.parse(raw) as FakeRequestBody) : {};
      } catch (error) {
        parseError = (error as Error).message;
      }
      const request: FakeRequest = {
        kind,
        method: incoming.method ?? 'GET',
        path,
        headers,
        body,
        receivedAt,
        finishedAt: null,
      };
      requests.push(request);
      response.on('close', () => {
        request.finishedAt = Date.now();
      });
      if (parseError !== null) {
        errors.push(`request to ${path} has a body that is not JSON: ${parseError}`);
        sendError(response, 400, `fake LLM: body is not JSON: ${parseError}`);
        return;
      }
      if (options.apiKey !== undefined && headers.authorization !== `Bearer ${options.apiKey}`) {
        const sent = headers.authorization?.replace(/^Bearer\s+/, '') ?? '';
        sendError(response, 401, `Incorrect API key provided: ${sent}`);
        return;
      }
      if (kind === 'chat' && incoming.method === 'POST') await answerChat(response, request);
      else if (kind === 'embeddings' && incoming.method === 'POST') await answerEmbeddings(response, request);
      else if (/^(\/v1)?\/models$/.test(path) && incoming.method === 'GET') {
        // The model list, as OpenAI, OpenRouter and Ollama serve it (steward doctor asks for it).
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({
            object: 'list',
            data: [{ id: 'fake/primary', object: 'model', owned_by: 'fake' }],
          }),
        );
      } else {
        errors.push(`unexpected ${incoming.method} ${path}`);
        sendError(response, 404, `fake LLM: no route ${incoming.method} ${path}`);
      }
    })().catch((error: unknown) => {
      errors.push(`fake LLM crashed: ${(error as Error).message}`);
      if (!response.headersSent) sendError(response, 500, `fake LLM crashed: ${(error as Error).message}`);
      else response.destroy();
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  fake = {
    url: `http://127.0.0.1:${port}/v1`,
    latencyMs: defaultLatencyMs,
    get handlingMs() {
      return handlingMs;
    },
    requests,
    get chatRequests() {
      return requests.filter((request) => request.kind === 'chat');
    },
    errors,
    get pending() {
      return queue.length + embeddingQueue.length;
    },
    enqueue(...steps: FakeStep[]) {
      queue.push(...steps);
    },
    enqueueEmbeddings(...failures: FakeFailure[]) {
      embeddingQueue.push(...failures);
    },
    respondWith(next: ((request: FakeRequest) => FakeStep) | null) {
      responder = next;
    },
    embeddingOf(text: string) {
      return bagOfWordsVector(text, dimensions);
    },
    assertDone() {
      const problems = [...errors];
      if (queue.length > 0) problems.push(`${queue.length} chat step(s) never consumed`);
      if (embeddingQueue.length > 0)
        problems.push(`${embeddingQueue.length} embeddings step(s) never consumed`);
      if (problems.length > 0) throw new Error(`fake LLM:\n- ${problems.join('\n- ')}`);
    },
    reset() {
      queue.length = 0;
      embeddingQueue.length = 0;
      requests.length = 0;
      errors.length = 0;
      cache.clear();
      responder = null;
      fake.latencyMs = defaultLatencyMs;
    },
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}

// ---------------------------------------------------------------------------------------------
// A client wired to the fake, for tests in other folders.

export const FAKE_MODELS = {
  primary: 'fake/primary',
  fallback: 'fake/fallback',
  embeddings: 'fake/embed',
} as const;

/** Every chat role on fake/primary with fake/fallback behind it; embeddings on fake/embed. Prices as Claude Sonnet/Haiku. */
export function fakeRoster(): Roster {
  const chat = { model: FAKE_MODELS.primary, fallbacks: [FAKE_MODELS.fallback] };
  return {
    models: new Map([
      [
        FAKE_MODELS.primary,
        {
          id: FAKE_MODELS.primary,
          tier: 'primary',
          context_window: 200_000,
          pricing: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 },
          tools: true,
        },
      ],
      [
        FAKE_MODELS.fallback,
        {
          id: FAKE_MODELS.fallback,
          tier: 'fast',
          context_window: 100_000,
          pricing: { input: 1, output: 5, cache_read: 0.1, cache_write: 1.25 },
          tools: true,
        },
      ],
      [
        FAKE_MODELS.embeddings,
        {
          id: FAKE_MODELS.embeddings,
          tier: 'cheap',
          context_window: 8_192,
          pricing: { input: 0.02, output: 0, cache_read: 0, cache_write: 0 },
          tools: false,
        },
      ],
    ]),
    roles: {
      orchestrator: chat,
      sub_agent: chat,
      compaction: chat,
      sentinel: chat,
      embeddings: { model: FAKE_MODELS.embeddings, fallbacks: [] },
    },
  };
}

/**
 * An OpenAiCompatibleClient talking to `fake` over HTTP: fakeRoster(), no retries, 5 s timeout,
 * and a sleep that returns at once. Override anything through `overrides`.
 */
export function fakeLlmClient(
  fake: FakeLlm,
  overrides: Partial<OpenAiCompatibleClientOptions> = {},
): OpenAiCompatibleClient {
  return new OpenAiCompatibleClient({
    baseUrl: fake.url,
    apiKey: 'sk-fake-test-key',
    roster: fakeRoster(),
    timeoutMs: 5_000,
    maxRetries: 0,
    appName: 'Steward Test',
    sleep: async () => {},
    random: () => 0.5,
    ...overrides,
  });
}

/** The fake LLM of a test file (or `describe` block), started before its tests, closed after them. */
export function useFakeLlm(options: FakeLlmOptions = {}): FakeLlm {
  return useStarted(
    'the fake LLM',
    () => startFakeLlm(options),
    (fake) => fake.close(),
  );
}
