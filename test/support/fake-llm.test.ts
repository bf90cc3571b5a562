import { afterEach, describe, expect, it } from 'vitest';
import { countTokens } from '../../src/llm/tokens.ts';
import { bagOfWordsVector, type FakeLlm, type FakeLlmOptions, startFakeLlm } from './fake-llm.ts';

const started: FakeLlm[] = [];

async function start(options: FakeLlmOptions = {}): Promise<FakeLlm> {
  const fake = await startFakeLlm(options);
  started.push(fake);
  return fake;
}

afterEach(async () => {
  await Promise.all(started.splice(0).map((fake) => fake.close()));
});

async function post(fake: FakeLlm, path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${fake.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

type Json = Record<string, unknown> & {
  choices: Array<{ message: { content: string | null; tool_calls?: unknown[] }; finish_reason: string }>;
  usage: { prompt_tokens: number; completion_tokens: number; prompt_tokens_details: Record<string, number> };
};

async function chat(fake: FakeLlm, body: Record<string, unknown>): Promise<Json> {
  const response = await post(fake, '/chat/completions', { model: 'm', ...body });
  expect(response.status).toBe(200);
  return (await response.json()) as Json;
}

/** The `data:` payloads of an SSE body. */
function sseData(text: string): string[] {
  return text
    .split('\n\n')
    .filter((event) => event.startsWith('data: '))
    .map((event) => event.slice('data: '.length));
}

const cachedSystem = (text: string, ttl?: '1h') => ({
  role: 'system',
  content: [{ type: 'text', text, cache_control: ttl ? { type: 'ephemeral', ttl } : { type: 'ephemeral' } }],
});

describe('fake LLM: scripting and strictness', () => {
  it('answers queued steps in order and records each request', async () => {
    const fake = await start();
    fake.enqueue({ text: 'first' }, { toolCalls: [{ name: 'run', arguments: { command: 'tasks.list' } }] });
    const first = await chat(fake, { messages: [{ role: 'user', content: 'hi' }] });
    const second = await chat(fake, { messages: [{ role: 'user', content: 'again' }] });
    expect(first.choices[0]?.message.content).toBe('first');
    expect(first.choices[0]?.finish_reason).toBe('stop');
    expect(second.choices[0]?.message.content).toBeNull();
    expect(second.choices[0]?.finish_reason).toBe('tool_calls');
    expect(second.choices[0]?.message.tool_calls).toEqual([
      {
        id: expect.any(String),
        type: 'function',
        function: { name: 'run', arguments: '{"command":"tasks.list"}' },
      },
    ]);
    expect(fake.requests.map((request) => request.body.messages?.[0]?.content)).toEqual(['hi', 'again']);
    const [request] = fake.requests;
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.finishedAt).toBeGreaterThanOrEqual(request?.receivedAt ?? Number.POSITIVE_INFINITY);
    expect(() => fake.assertDone()).not.toThrow();
  });

  it('fails an unexpected request with HTTP 500 and reports it in assertDone', async () => {
    const fake = await start();
    const response = await post(fake, '/chat/completions', {
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(response.status).toBe(500);
    expect(await response.text()).toContain('unexpected chat request');
    expect(() => fake.assertDone()).toThrow(/unexpected chat request #1/);
  });

  it('reports unconsumed steps', async () => {
    const fake = await start();
    fake.enqueue({ text: 'never asked' });
    fake.enqueueEmbeddings({ status: 500 });
    expect(() => fake.assertDone()).toThrow(/1 chat step\(s\) never consumed[\s\S]*1 embeddings step/);
    fake.reset();
    expect(() => fake.assertDone()).not.toThrow();
  });

  it('answers a failed expectation with HTTP 400 that carries the assertion message', async () => {
    const fake = await start();
    fake.enqueue({
      text: 'ok',
      expect: (request) => {
        if (request.body.model !== 'wanted') throw new Error(`model was ${request.body.model}`);
      },
    });
    const response = await post(fake, '/chat/completions', { model: 'other', messages: [] });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('model was other');
    expect(() => fake.assertDone()).toThrow(/expectation failed on chat request #1: model was other/);
  });

  it('falls back to respondWith when the queue is empty', async () => {
    const fake = await start();
    fake.respondWith((request) => ({ text: `echo: ${request.body.messages?.at(-1)?.content}` }));
    fake.enqueue({ text: 'queued first' });
    expect(
      (await chat(fake, { messages: [{ role: 'user', content: 'a' }] })).choices[0]?.message.content,
    ).toBe('queued first');
    expect(
      (await chat(fake, { messages: [{ role: 'user', content: 'b' }] })).choices[0]?.message.content,
    ).toBe('echo: b');
    fake.assertDone();
  });

  it('sends failures the way providers do', async () => {
    const fake = await start();
    fake.enqueue({ status: 429, retryAfter: 3 }, { malformed: true }, { noChoices: true });
    const limited = await post(fake, '/chat/completions', { model: 'm', messages: [] });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('3');
    expect(await limited.json()).toEqual({
      error: { code: 429, message: expect.stringContaining('Rate limit') },
    });
    const malformed = await post(fake, '/chat/completions', { model: 'm', messages: [] });
    await expect(malformed.json()).rejects.toThrow();
    const empty = await chat(fake, { messages: [] });
    expect(empty.choices).toEqual([]);
    fake.assertDone();
  });

  it('holds a hanging request open until the fake closes', async () => {
    const fake = await start();
    fake.enqueue({ hang: true });
    const pending = post(fake, '/chat/completions', { model: 'm', messages: [] }).catch(
      (error: Error) => error.name,
    );
    const outcome = await Promise.race([
      pending,
      new Promise((resolve) => setTimeout(() => resolve('still open'), 150)),
    ]);
    expect(outcome).toBe('still open');
    await fake.close();
    expect(await pending).toBe('TypeError');
  });

  it('rejects a wrong API key with a 401 that echoes the key, like some providers', async () => {
    const fake = await start({ apiKey: 'right' });
    const response = await post(
      fake,
      '/chat/completions',
      { model: 'm', messages: [] },
      { authorization: 'Bearer wrong' },
    );
    expect(response.status).toBe(401);
    expect(await response.text()).toContain('Incorrect API key provided: wrong');
    fake.assertDone();
  });

  it('waits latencyMs before answering', async () => {
    const fake = await start({ latencyMs: 80 });
    fake.enqueue({ text: 'slow' });
    await chat(fake, { messages: [] });
    const [request] = fake.requests;
    expect((request?.finishedAt ?? 0) - (request?.receivedAt ?? 0)).toBeGreaterThanOrEqual(70);
  });
});

describe('fake LLM: streaming', () => {
  it('streams text, tool-call deltas, a finish reason, a usage chunk and [DONE]', async () => {
    const fake = await start();
    fake.enqueue({
      text: 'Two words',
      toolCalls: [{ id: 'call_9', name: 'run', arguments: { command: 'tasks.create --title x' } }],
    });
    const response = await post(fake, '/chat/completions', {
      model: 'm',
      messages: [{ role: 'user', content: 'go' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const data = sseData(await response.text());
    expect(data.at(-1)).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((item) => JSON.parse(item));
    for (const chunk of chunks) expect(chunk.object).toBe('chat.completion.chunk');
    const deltas = chunks.flatMap((chunk) => chunk.choices.map((choice: { delta: unknown }) => choice.delta));
    const text = deltas.map((delta: { content?: string }) => delta.content ?? '').join('');
    expect(text).toBe('Two words');
    const toolDeltas = deltas.flatMap(
      (delta: { tool_calls?: unknown[] }) => delta.tool_calls ?? [],
    ) as Array<{
      index: number;
      id?: string;
      function: { name?: string; arguments: string };
    }>;
    expect(toolDeltas[0]).toMatchObject({ index: 0, id: 'call_9', function: { name: 'run', arguments: '' } });
    expect(toolDeltas.length).toBeGreaterThan(2);
    expect(toolDeltas.map((delta) => delta.function.arguments).join('')).toBe(
      '{"command":"tasks.create --title x"}',
    );
    const finish = chunks.flatMap((chunk) => chunk.choices).find((choice) => choice.finish_reason);
    expect(finish.finish_reason).toBe('tool_calls');
    const usageChunk = chunks.at(-1);
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it('sends no usage chunk unless stream_options.include_usage is set', async () => {
    const fake = await start();
    fake.enqueue({ text: 'hello' });
    const response = await post(fake, '/chat/completions', { model: 'm', messages: [], stream: true });
    const chunks = sseData(await response.text())
      .slice(0, -1)
      .map((item) => JSON.parse(item));
    expect(chunks.every((chunk) => chunk.usage === undefined)).toBe(true);
    expect(chunks.every((chunk) => chunk.choices.length === 1)).toBe(true);
  });
});

describe('fake LLM: usage and prompt caching', () => {
  it('counts prompt tokens from the request and completion tokens from the answer', async () => {
    const fake = await start();
    const question = 'How many meetings do I have on Thursday afternoon?';
    fake.enqueue({ text: 'You have three meetings.' });
    const body = await chat(fake, { messages: [{ role: 'user', content: question }] });
    expect(body.usage.prompt_tokens).toBe(countTokens(question) + 4);
    expect(body.usage.completion_tokens).toBe(countTokens('You have three meetings.'));
    expect(body.usage.prompt_tokens_details).toEqual({ cached_tokens: 0, cache_write_tokens: 0 });
  });

  it('writes the prefix up to the last breakpoint, then reads it while the TTL lasts', async () => {
    let now = 1_000_000;
    const fake = await start({ now: () => now });
    const system = cachedSystem('Stable instructions. '.repeat(50));
    const tools = [{ type: 'function', function: { name: 'run', description: 'Run', parameters: {} } }];
    fake.respondWith(() => ({ text: 'ok' }));
    const ask = (content: string) => chat(fake, { tools, messages: [system, { role: 'user', content }] });

    const first = (await ask('one')).usage.prompt_tokens_details;
    expect(first.cached_tokens).toBe(0);
    expect(first.cache_write_tokens).toBeGreaterThan(100);
    now += 4 * 60_000;
    const second = (await ask('two')).usage.prompt_tokens_details;
    expect(second).toEqual({ cached_tokens: first.cache_write_tokens, cache_write_tokens: 0 });
    // A hit refreshes the entry: 4 more minutes is still within 5 minutes of the last read.
    now += 4 * 60_000;
    expect((await ask('three')).usage.prompt_tokens_details.cached_tokens).toBe(first.cache_write_tokens);
    now += 6 * 60_000;
    const expired = (await ask('four')).usage.prompt_tokens_details;
    expect(expired).toEqual({ cached_tokens: 0, cache_write_tokens: first.cache_write_tokens });
  });

  it('keeps a 1h breakpoint for an hour', async () => {
    let now = 0;
    const fake = await start({ now: () => now });
    fake.respondWith(() => ({ text: 'ok' }));
    const messages = [cachedSystem('Long lived. '.repeat(30), '1h'), { role: 'user', content: 'hi' }];
    const write = (await chat(fake, { messages })).usage.prompt_tokens_details.cache_write_tokens;
    now += 59 * 60_000;
    expect((await chat(fake, { messages })).usage.prompt_tokens_details.cached_tokens).toBe(write);
    now += 61 * 60_000;
    expect((await chat(fake, { messages })).usage.prompt_tokens_details.cached_tokens).toBe(0);
  });

  it('reads the longest cached breakpoint and writes the rest', async () => {
    const fake = await start();
    fake.respondWith(() => ({ text: 'ok' }));
    const system = cachedSystem('System rules. '.repeat(40));
    const history = (text: string) => ({
      role: 'user',
      content: [{ type: 'text', text, cache_control: { type: 'ephemeral' } }],
    });
    const first = (await chat(fake, { messages: [system, history('Summary A. '.repeat(20))] })).usage;
    const systemOnly = (await chat(fake, { messages: [system] })).usage.prompt_tokens;
    const second = (await chat(fake, { messages: [system, history('Summary B. '.repeat(20))] })).usage;
    expect(first.prompt_tokens_details.cache_write_tokens).toBe(first.prompt_tokens);
    expect(second.prompt_tokens_details.cached_tokens).toBe(systemOnly);
    expect(second.prompt_tokens_details.cache_write_tokens).toBe(second.prompt_tokens - systemOnly);
  });

  it('treats a changed prefix as a miss', async () => {
    const fake = await start();
    fake.respondWith(() => ({ text: 'ok' }));
    await chat(fake, { messages: [cachedSystem('Version one. '.repeat(20))] });
    const changed = (await chat(fake, { messages: [cachedSystem('Version two. '.repeat(20))] })).usage;
    expect(changed.prompt_tokens_details.cached_tokens).toBe(0);
  });

  it('lets a step override the usage it reports', async () => {
    const fake = await start();
    fake.enqueue({
      text: 'ok',
      usage: { promptTokens: 1234, cachedTokens: 1000, cacheWriteTokens: 0, completionTokens: 7 },
    });
    const { usage } = await chat(fake, { messages: [] });
    expect(usage).toMatchObject({
      prompt_tokens: 1234,
      completion_tokens: 7,
      prompt_tokens_details: { cached_tokens: 1000, cache_write_tokens: 0 },
    });
  });
});

describe('fake LLM: embeddings', () => {
  it('answers with deterministic normalized vectors of the configured size', async () => {
    const fake = await start({ embeddingDimensions: 32 });
    const response = await post(fake, '/embeddings', { model: 'e', input: ['alpha beta', 'gamma'] });
    const body = (await response.json()) as { data: Array<{ index: number; embedding: number[] }> };
    expect(body.data.map((item) => item.index)).toEqual([0, 1]);
    expect(body.data[0]?.embedding).toEqual(fake.embeddingOf('alpha beta'));
    expect(body.data[0]?.embedding).toHaveLength(32);
    expect(Math.hypot(...(body.data[1]?.embedding ?? []))).toBeCloseTo(1, 10);
    fake.assertDone();
  });

  it('gives texts that share words a higher cosine similarity', () => {
    const cosine = (a: number[], b: number[]) =>
      a.reduce((sum, value, index) => sum + value * (b[index] ?? 0), 0);
    const milk = bagOfWordsVector('buy milk and eggs', 256);
    const similar = bagOfWordsVector('milk and eggs please', 256);
    const unrelated = bagOfWordsVector('quarterly board meeting', 256);
    expect(cosine(milk, similar)).toBeGreaterThan(cosine(milk, unrelated));
    expect(cosine(milk, bagOfWordsVector('Buy MILK and eggs!', 256))).toBeCloseTo(1, 10);
  });

  it('fails queued embeddings requests, then answers again', async () => {
    const fake = await start();
    fake.enqueueEmbeddings({ status: 503 });
    expect((await post(fake, '/embeddings', { model: 'e', input: 'x' })).status).toBe(503);
    // Without the /v1 prefix too, for clients configured with the bare host.
    const bare = await fetch(`${fake.url.replace(/\/v1$/, '')}/embeddings`, {
      method: 'POST',
      body: JSON.stringify({ model: 'e', input: 'x' }),
    });
    expect(bare.status).toBe(200);
    expect(fake.requests.map((request) => request.path)).toEqual(['/v1/embeddings', '/embeddings']);
    fake.assertDone();
  });
});
