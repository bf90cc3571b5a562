import { beforeEach, describe, expect, it } from 'vitest';
import { FAKE_MODELS, fakeLlmClient, fakeRoster } from '../../test/support/fake-llm.ts';
import { failure, hello, noFallbacks as noFallbacksOn, useFakeLlm } from '../../test/support/llm-client.ts';
import type { OpenAiCompatibleClientOptions } from './openai-client.ts';
import type { ChatRequest, LlmCallRecord } from './types.ts';
import { costOf } from './usage.ts';

const useFake = useFakeLlm();
let fake: ReturnType<typeof useFake>;
beforeEach(() => {
  fake = useFake();
});
const noFallbacks = (options: Partial<OpenAiCompatibleClientOptions> = {}) => noFallbacksOn(fake, options);

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
