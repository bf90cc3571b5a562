import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  FAKE_MODELS,
  type FakeLlm,
  fakeLlmClient,
  fakeRoster,
  startFakeLlm,
} from '../../test/support/fake-llm.ts';
import type { Roster } from '../config/index.ts';
import { LlmError } from './errors.ts';
import type { OpenAiCompatibleClientOptions } from './openai-client.ts';
import type { ChatRequest, LlmCallRecord, LlmErrorClass } from './types.ts';
import { costOf } from './usage.ts';

let fake: FakeLlm;

beforeAll(async () => {
  fake = await startFakeLlm();
});
afterEach(() => {
  try {
    fake.assertDone();
  } finally {
    fake.reset();
  }
});
afterAll(async () => {
  await fake.close();
});

const hello: ChatRequest = { role: 'orchestrator', messages: [{ role: 'user', content: 'Hello' }] };

/** The orchestrator role without fallbacks, so a failure surfaces as is. */
function noFallbacks(options: Partial<OpenAiCompatibleClientOptions> = {}) {
  return fakeLlmClient(fake, {
    roles: { orchestrator: { model: FAKE_MODELS.primary, fallbacks: [] } },
    ...options,
  });
}

async function failure(promise: Promise<unknown>): Promise<LlmError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(LlmError);
    return error as LlmError;
  }
  throw new Error('expected the call to fail');
}

describe('OpenAiCompatibleClient.chat', () => {
  it('answers plain text and sends model, key and attribution headers', async () => {
    fake.enqueue({ text: 'Hello there, how can I help?' });
    const response = await fakeLlmClient(fake).chat(hello);
    expect(response.text).toBe('Hello there, how can I help?');
    expect(response.toolCalls).toEqual([]);
    expect(response.finishReason).toBe('stop');
    expect(response.model).toBe(FAKE_MODELS.primary);
    expect(response.latencyMs).toBeGreaterThanOrEqual(0);
    const [request] = fake.chatRequests;
    expect(request?.path).toBe('/v1/chat/completions');
    expect(request?.body.model).toBe(FAKE_MODELS.primary);
    expect(request?.body.messages).toEqual([{ role: 'user', content: 'Hello' }]);
    expect(request?.body.stream).toBeUndefined();
    expect(request?.headers.authorization).toBe('Bearer sk-fake-test-key');
    expect(request?.headers['x-title']).toBe('Steward Test');
    expect(request?.headers['http-referer']).toBe('https://steward-test.local/');
  });

  it('maps every message kind, tools, cache breakpoints and options to the wire format', async () => {
    fake.enqueue({ text: 'done' });
    await fakeLlmClient(fake).chat({
      role: 'orchestrator',
      messages: [
        {
          role: 'system',
          content: [
            { type: 'text', text: 'You are Steward.', cache_control: { type: 'ephemeral', ttl: '1h' } },
            { type: 'text', text: 'Today is Monday.' },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What did I say?' },
            { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          toolCalls: [
            {
              id: 'call_1',
              name: 'run',
              arguments: { command: 'tasks.list' },
              rawArguments: '{"command":"tasks.list"}',
            },
          ],
        },
        { role: 'tool', toolCallId: 'call_1', content: 'No tasks.' },
      ],
      tools: [
        {
          name: 'get_skill',
          description: 'Read a skill page',
          parameters: { type: 'object', properties: {} },
        },
        {
          name: 'run',
          description: 'Run a command',
          parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
          cacheControl: { type: 'ephemeral' },
        },
      ],
      toolChoice: 'auto',
      temperature: 0.2,
      maxTokens: 500,
      json: true,
      sessionId: 'conversation-42',
    });
    const body = fake.chatRequests[0]?.body;
    expect(body?.messages).toEqual([
      {
        role: 'system',
        content: [
          { type: 'text', text: 'You are Steward.', cache_control: { type: 'ephemeral', ttl: '1h' } },
          { type: 'text', text: 'Today is Monday.' },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What did I say?' },
          { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'run', arguments: '{"command":"tasks.list"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'No tasks.' },
    ]);
    expect(body?.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'get_skill',
          description: 'Read a skill page',
          parameters: { type: 'object', properties: {} },
        },
      },
      {
        type: 'function',
        function: {
          name: 'run',
          description: 'Run a command',
          parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
        },
        cache_control: { type: 'ephemeral' },
      },
    ]);
    expect(body).toMatchObject({
      tool_choice: 'auto',
      temperature: 0.2,
      max_tokens: 500,
      response_format: { type: 'json_object' },
      session_id: 'conversation-42',
    });
  });

  it('returns tool calls with parsed arguments', async () => {
    fake.enqueue({
      toolCalls: [
        { id: 'call_a', name: 'run', arguments: { command: 'tasks.list --status open' } },
        { id: 'call_b', name: 'get_skill', arguments: { path: 'email' } },
      ],
    });
    const response = await fakeLlmClient(fake).chat(hello);
    expect(response.finishReason).toBe('tool_calls');
    expect(response.text).toBe('');
    expect(response.toolCalls).toEqual([
      {
        id: 'call_a',
        name: 'run',
        arguments: { command: 'tasks.list --status open' },
        rawArguments: '{"command":"tasks.list --status open"}',
      },
      { id: 'call_b', name: 'get_skill', arguments: { path: 'email' }, rawArguments: '{"path":"email"}' },
    ]);
  });

  it('streams text deltas to onDelta and returns the whole text with usage', async () => {
    const text = 'Your next meeting is at three with the design team.';
    fake.enqueue({ text });
    const deltas: string[] = [];
    const response = await fakeLlmClient(fake).chat({ ...hello, onDelta: (delta) => deltas.push(delta) });
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.join('')).toBe(text);
    expect(response.text).toBe(text);
    expect(response.finishReason).toBe('stop');
    expect(response.usage.promptTokens).toBeGreaterThan(0);
    expect(response.usage.completionTokens).toBeGreaterThan(0);
    const body = fake.chatRequests[0]?.body;
    expect(body?.stream).toBe(true);
    expect(body?.stream_options).toEqual({ include_usage: true });
  });

  it('assembles streamed tool calls from their deltas', async () => {
    const long = {
      command: 'email.send --to ana@example.com --subject "Quarterly numbers" --body "See attached"',
    };
    fake.enqueue({
      text: 'Sending now.',
      toolCalls: [
        { id: 'call_1', name: 'run', arguments: long },
        { id: 'call_2', name: 'get_skill', arguments: { path: 'email.send' } },
      ],
    });
    const deltas: string[] = [];
    const response = await fakeLlmClient(fake).chat({ ...hello, onDelta: (delta) => deltas.push(delta) });
    expect(deltas.join('')).toBe('Sending now.');
    expect(response.finishReason).toBe('tool_calls');
    expect(response.toolCalls.map(({ id, name, arguments: args }) => ({ id, name, args }))).toEqual([
      { id: 'call_1', name: 'run', args: long },
      { id: 'call_2', name: 'get_skill', args: { path: 'email.send' } },
    ]);
  });

  it('keeps a stream alive while chunks keep coming (the timeout is per silence)', async () => {
    // 15 chunks 100 ms apart: 1.5 s in all, against a 1 s timeout.
    const text = 'one two three four five six seven eight nine ten eleven twelve';
    fake.enqueue({ text, chunkDelayMs: 100 });
    const response = await noFallbacks({ timeoutMs: 1_000 }).chat({ ...hello, onDelta: () => {} });
    expect(response.text).toBe(text);
  });

  it('times out a stream that goes silent', async () => {
    fake.enqueue({ text: 'one two three', chunkDelayMs: 400 });
    const deltas: string[] = [];
    const error = await failure(
      noFallbacks({ timeoutMs: 150 }).chat({ ...hello, onDelta: (delta) => deltas.push(delta) }),
    );
    expect(error.errorClass).toBe('timeout');
    expect(deltas.join('')).toBe('');
  });

  it('stops a stream with aborted when the caller aborts mid-answer', async () => {
    fake.enqueue({ text: 'a b c d e f g h i j k l m n o p', chunkDelayMs: 30 });
    const controller = new AbortController();
    const deltas: string[] = [];
    const request = {
      ...hello,
      signal: controller.signal,
      onDelta: (delta: string) => {
        deltas.push(delta);
        if (deltas.length === 3) controller.abort();
      },
    };
    const error = await failure(noFallbacks({ maxRetries: 2 }).chat(request));
    expect(error.errorClass).toBe('aborted');
    expect(deltas.join('')).toBe('a b c ');
    expect(fake.chatRequests).toHaveLength(1);
  });

  it('keeps streaming when onDelta throws', async () => {
    fake.enqueue({ text: 'still complete' });
    const response = await fakeLlmClient(fake).chat({
      ...hello,
      onDelta: () => {
        throw new Error('UI went away');
      },
    });
    expect(response.text).toBe('still complete');
  });

  it('reports cache writes, then cache reads for the same prefix, and prices them', async () => {
    const stable = 'You are Steward, a personal assistant. '.repeat(40);
    const request: ChatRequest = {
      role: 'orchestrator',
      messages: [
        { role: 'system', content: [{ type: 'text', text: stable, cache_control: { type: 'ephemeral' } }] },
        { role: 'user', content: 'What is on my calendar?' },
      ],
    };
    fake.enqueue({ text: 'Nothing today.' }, { text: 'Still nothing.' });
    const client = fakeLlmClient(fake);
    const first = await client.chat(request);
    const second = await client.chat({
      ...request,
      messages: [request.messages[0]!, { role: 'user', content: 'And tomorrow?' }],
    });
    expect(first.usage.cachedTokens).toBe(0);
    expect(first.usage.cacheWriteTokens).toBeGreaterThan(200);
    expect(second.usage.cachedTokens).toBe(first.usage.cacheWriteTokens);
    expect(second.usage.cacheWriteTokens).toBe(0);
    const primary = fakeRoster().models.get(FAKE_MODELS.primary)!;
    for (const usage of [first.usage, second.usage]) {
      expect(usage.cost).toBeCloseTo(costOf(primary, usage), 12);
    }
    // A cache read is 10x cheaper than a write (0.3 vs 3.75 per million).
    expect(second.usage.cost).toBeLessThan(first.usage.cost);
  });

  it('prices uncached input, cache reads, cache writes and output at their own rates', async () => {
    fake.enqueue({
      text: 'ok',
      usage: { promptTokens: 10_000, cachedTokens: 6_000, cacheWriteTokens: 1_000, completionTokens: 500 },
    });
    const { usage } = await fakeLlmClient(fake).chat(hello);
    expect(usage).toEqual({
      promptTokens: 10_000,
      cachedTokens: 6_000,
      cacheWriteTokens: 1_000,
      completionTokens: 500,
      cost: (3_000 * 3 + 6_000 * 0.3 + 1_000 * 3.75 + 500 * 15) / 1_000_000,
    });
  });
});

describe('failure classes', () => {
  const cases: Array<{ name: string; step: Parameters<FakeLlm['enqueue']>[0]; errorClass: LlmErrorClass }> = [
    { name: '401 → auth', step: { status: 401 }, errorClass: 'auth' },
    { name: '403 → auth', step: { status: 403 }, errorClass: 'auth' },
    { name: '402 → credits', step: { status: 402 }, errorClass: 'credits' },
    { name: '429 → rate_limit', step: { status: 429 }, errorClass: 'rate_limit' },
    {
      name: '400 with context wording → context_length',
      step: {
        status: 400,
        message:
          "This endpoint's maximum context length is 200000 tokens. However, you requested about 250000 tokens.",
      },
      errorClass: 'context_length',
    },
    {
      name: 'other 400 → bad_request',
      step: { status: 400, message: 'tools[0].name is invalid' },
      errorClass: 'bad_request',
    },
    { name: '404 → bad_request', step: { status: 404 }, errorClass: 'bad_request' },
    { name: '500 → provider_down', step: { status: 500 }, errorClass: 'provider_down' },
    { name: '503 → provider_down', step: { status: 503 }, errorClass: 'provider_down' },
    { name: 'malformed JSON → bad_response', step: { malformed: true }, errorClass: 'bad_response' },
    { name: 'no choices → bad_response', step: { noChoices: true }, errorClass: 'bad_response' },
    {
      name: 'tool-call arguments that are not JSON → bad_response',
      step: { toolCalls: [{ name: 'run', arguments: '{"command": "tasks.list"' }] },
      errorClass: 'bad_response',
    },
    {
      name: 'tool-call arguments that are a JSON array → bad_response',
      step: { toolCalls: [{ name: 'run', arguments: '["tasks.list"]' }] },
      errorClass: 'bad_response',
    },
  ];

  for (const { name, step, errorClass } of cases) {
    it(name, async () => {
      fake.enqueue(step);
      const error = await failure(noFallbacks().chat(hello));
      expect(error.errorClass).toBe(errorClass);
      expect(error.model).toBe(FAKE_MODELS.primary);
      expect(error.code).toBe(`llm_${errorClass}`);
    });
  }

  it('classifies a malformed stream as bad_response', async () => {
    fake.enqueue({ malformed: true });
    const error = await failure(noFallbacks().chat({ ...hello, onDelta: () => {} }));
    expect(error.errorClass).toBe('bad_response');
  });

  it('classifies a stream with invalid tool-call JSON as bad_response', async () => {
    fake.enqueue({ toolCalls: [{ name: 'run', arguments: 'command=tasks.list' }] });
    const error = await failure(noFallbacks().chat({ ...hello, onDelta: () => {} }));
    expect(error.errorClass).toBe('bad_response');
    expect(error.message).toContain('run');
  });

  it('reads the status and Retry-After of a 429', async () => {
    fake.enqueue({ status: 429, retryAfter: 12 });
    const error = await failure(noFallbacks().chat(hello));
    expect(error.status).toBe(429);
    expect(error.retryAfterSeconds).toBe(12);
    expect(error.retryable).toBe(true);
  });

  it('times out a request that hangs longer than timeoutMs', async () => {
    fake.enqueue({ hang: true });
    const started = Date.now();
    const error = await failure(noFallbacks({ timeoutMs: 150 }).chat(hello));
    expect(error.errorClass).toBe('timeout');
    expect(error.message).toContain('150 ms');
    expect(Date.now() - started).toBeLessThan(4_000);
  });

  it('stops with aborted, without retrying, when the caller aborts', async () => {
    fake.enqueue({ hang: true });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const error = await failure(noFallbacks({ maxRetries: 3 }).chat({ ...hello, signal: controller.signal }));
    expect(error.errorClass).toBe('aborted');
    expect(fake.chatRequests).toHaveLength(1);
  });

  it('does not call the model at all when the signal is already aborted', async () => {
    const error = await failure(noFallbacks().chat({ ...hello, signal: AbortSignal.abort() }));
    expect(error.errorClass).toBe('aborted');
    expect(fake.requests).toHaveLength(0);
  });

  it('stops with aborted when the caller aborts during the backoff wait', async () => {
    fake.enqueue({ status: 503 });
    const controller = new AbortController();
    const client = noFallbacks({
      maxRetries: 3,
      sleep: async () => {
        controller.abort();
        throw new Error('sleep interrupted');
      },
    });
    const error = await failure(client.chat({ ...hello, signal: controller.signal }));
    expect(error.errorClass).toBe('aborted');
    expect(fake.chatRequests).toHaveLength(1);
  });

  it('classifies an unreachable endpoint as provider_down', async () => {
    const gone = await startFakeLlm();
    const url = gone.url;
    await gone.close();
    const error = await failure(noFallbacks({ baseUrl: url }).chat(hello));
    expect(error.errorClass).toBe('provider_down');
  });

  it('never puts the API key in an error message, even when the provider echoes it', async () => {
    const guarded = await startFakeLlm({ apiKey: 'sk-or-v1-the-right-key' });
    const apiKey = 'sk-or-v1-0123456789abcdef-wrong-key';
    const records: LlmCallRecord[] = [];
    try {
      const client = fakeLlmClient(guarded, { apiKey, recorder: (record) => void records.push(record) });
      const error = await failure(client.chat(hello));
      expect(error.errorClass).toBe('auth');
      expect(guarded.requests[0]?.headers.authorization).toBe(`Bearer ${apiKey}`);
      expect(error.message).toContain('Incorrect API key provided');
      expect(error.message).not.toContain(apiKey);
      expect(error.stack ?? '').not.toContain(apiKey);
      expect(String(error.cause ?? '')).not.toContain(apiKey);
      expect(records[0]?.error).not.toContain(apiKey);
    } finally {
      await guarded.close();
    }
  });
});

describe('retries and fallbacks', () => {
  it('retries a 429 after waiting at least its Retry-After', async () => {
    fake.enqueue({ status: 429, retryAfter: 7 }, { text: 'ok now' });
    const waits: number[] = [];
    const client = noFallbacks({
      maxRetries: 2,
      random: () => 0,
      sleep: async (ms) => void waits.push(ms),
    });
    const response = await client.chat(hello);
    expect(response.text).toBe('ok now');
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThanOrEqual(7_000);
  });

  it('backs off exponentially with jitter between retries', async () => {
    fake.enqueue({ status: 500 }, { status: 502 }, { status: 429 }, { text: 'finally' });
    const waits: number[] = [];
    const client = noFallbacks({
      maxRetries: 3,
      random: () => 0.99,
      sleep: async (ms) => void waits.push(ms),
    });
    const response = await client.chat(hello);
    expect(response.text).toBe('finally');
    expect(waits).toHaveLength(3);
    waits.forEach((wait, attempt) => {
      expect(wait).toBeLessThanOrEqual(500 * 2 ** attempt);
      expect(wait).toBeGreaterThan(0.9 * 500 * 2 ** attempt);
    });
  });

  it('retries bad responses', async () => {
    fake.enqueue({ noChoices: true }, { text: 'recovered' });
    const response = await noFallbacks({ maxRetries: 1 }).chat(hello);
    expect(response.text).toBe('recovered');
  });

  it('moves to the fallback model once retries are exhausted', async () => {
    fake.enqueue({ status: 500 }, { status: 503 }, { text: 'from the fallback' });
    const response = await fakeLlmClient(fake, { maxRetries: 1 }).chat(hello);
    expect(response.text).toBe('from the fallback');
    expect(response.model).toBe(FAKE_MODELS.fallback);
    expect(fake.chatRequests.map((request) => request.body.model)).toEqual([
      FAKE_MODELS.primary,
      FAKE_MODELS.primary,
      FAKE_MODELS.fallback,
    ]);
  });

  it('tries the role fallbacks behind a model override', async () => {
    fake.enqueue({ status: 429 }, { text: 'fallback answered' });
    const response = await fakeLlmClient(fake).chat({ ...hello, model: 'custom/model' });
    expect(response.model).toBe(FAKE_MODELS.fallback);
    expect(fake.chatRequests.map((request) => request.body.model)).toEqual([
      'custom/model',
      FAKE_MODELS.fallback,
    ]);
  });

  it('throws the last error when every model fails', async () => {
    fake.enqueue({ status: 500 }, { status: 429 });
    const error = await failure(fakeLlmClient(fake).chat(hello));
    expect(error.errorClass).toBe('rate_limit');
    expect(error.model).toBe(FAKE_MODELS.fallback);
  });

  for (const status of [401, 402, 400]) {
    it(`does not retry or fall back after HTTP ${status}`, async () => {
      fake.enqueue({ status });
      await failure(fakeLlmClient(fake, { maxRetries: 3 }).chat(hello));
      expect(fake.chatRequests).toHaveLength(1);
    });
  }

  it('after context_length, skips to a fallback only when it has a larger window', async () => {
    const roster: Roster = {
      models: new Map([
        ['small', { ...fakeRoster().models.get(FAKE_MODELS.primary)!, id: 'small', context_window: 8_000 }],
        ['same', { ...fakeRoster().models.get(FAKE_MODELS.primary)!, id: 'same', context_window: 8_000 }],
        [
          'large',
          { ...fakeRoster().models.get(FAKE_MODELS.primary)!, id: 'large', context_window: 1_000_000 },
        ],
      ]),
      roles: { orchestrator: { model: 'small', fallbacks: ['same', 'large'] } },
    };
    fake.enqueue(
      { status: 400, message: 'prompt is too long: 9000 tokens > 8000 maximum' },
      { text: 'fits' },
    );
    const response = await fakeLlmClient(fake, { roster, maxRetries: 2 }).chat(hello);
    expect(response.model).toBe('large');
    expect(fake.chatRequests.map((request) => request.body.model)).toEqual(['small', 'large']);
  });

  it('fails with not_configured when the role has no model', async () => {
    const client = fakeLlmClient(fake, { roles: {} });
    const error = await failure(client.chat({ ...hello, role: 'sentinel' }));
    expect(error.errorClass).toBe('not_configured');
    expect(error.message).toContain('llm.roles.sentinel.model');
  });
});

describe('usage recording', () => {
  it('records every attempt, failed or not, with its context', async () => {
    fake.enqueue(
      { status: 503 },
      { malformed: true },
      { text: 'third time lucky', usage: { completionTokens: 4 } },
    );
    const records: LlmCallRecord[] = [];
    const client = noFallbacks({ maxRetries: 2, recorder: (record) => void records.push(record) });
    const context = { turnId: 'turn-1', conversationId: 'conv-1', userId: 'local', executionId: null };
    const response = await client.chat({ ...hello, role: 'orchestrator', context });
    expect(records.map((record) => record.errorClass)).toEqual(['provider_down', 'bad_response', undefined]);
    for (const record of records) {
      expect(record).toMatchObject({ ...context, role: 'orchestrator', model: FAKE_MODELS.primary });
      expect(record.latencyMs).toBeGreaterThanOrEqual(0);
    }
    expect(records[0]?.usage.promptTokens).toBe(0);
    expect(records[0]?.error).toContain('503');
    expect(records[2]?.usage).toEqual(response.usage);
    expect(records[2]?.usage.completionTokens).toBe(4);
    expect(records[2]?.error).toBeUndefined();
  });

  it('records fallback attempts under the fallback model', async () => {
    fake.enqueue({ status: 500 }, { text: 'ok' });
    const records: LlmCallRecord[] = [];
    await fakeLlmClient(fake, { recorder: (record) => void records.push(record) }).chat(hello);
    expect(records.map((record) => [record.model, record.errorClass ?? 'ok'])).toEqual([
      [FAKE_MODELS.primary, 'provider_down'],
      [FAKE_MODELS.fallback, 'ok'],
    ]);
  });

  it('does not fail the call when the recorder throws or rejects', async () => {
    fake.enqueue({ text: 'first' }, { text: 'second' });
    const throwing = fakeLlmClient(fake, {
      recorder: () => {
        throw new Error('disk full');
      },
    });
    expect((await throwing.chat(hello)).text).toBe('first');
    const rejecting = fakeLlmClient(fake, { recorder: async () => Promise.reject(new Error('db down')) });
    expect((await rejecting.chat(hello)).text).toBe('second');
  });
});

describe('OpenAiCompatibleClient.embed', () => {
  it('returns one vector per text, in input order, with usage and cost', async () => {
    const texts = ['buy milk and eggs', 'call the dentist', 'milk and eggs from the shop'];
    const records: LlmCallRecord[] = [];
    const response = await fakeLlmClient(fake, { recorder: (record) => void records.push(record) }).embed({
      texts,
      context: { userId: 'local' },
    });
    expect(response.model).toBe(FAKE_MODELS.embeddings);
    expect(response.vectors).toEqual(texts.map((text) => fake.embeddingOf(text)));
    expect(response.usage.promptTokens).toBeGreaterThan(0);
    expect(response.usage.cost).toBeCloseTo((response.usage.promptTokens * 0.02) / 1_000_000, 15);
    const body = fake.requests[0]?.body;
    expect(body).toMatchObject({ model: FAKE_MODELS.embeddings, input: texts, encoding_format: 'float' });
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ role: 'embeddings', model: FAKE_MODELS.embeddings, userId: 'local' });
  });

  it('retries a failed embeddings call', async () => {
    fake.enqueueEmbeddings({ status: 503 });
    const response = await fakeLlmClient(fake, { maxRetries: 1 }).embed({ texts: ['hello'] });
    expect(response.vectors).toHaveLength(1);
    expect(fake.requests).toHaveLength(2);
  });

  it('classifies embeddings failures like chat failures', async () => {
    fake.enqueueEmbeddings({ status: 401 });
    const error = await failure(fakeLlmClient(fake, { maxRetries: 3 }).embed({ texts: ['hello'] }));
    expect(error.errorClass).toBe('auth');
    expect(fake.requests).toHaveLength(1);
  });

  it('makes no request for no texts', async () => {
    const response = await fakeLlmClient(fake).embed({ texts: [] });
    expect(response.vectors).toEqual([]);
    expect(fake.requests).toHaveLength(0);
  });
});
