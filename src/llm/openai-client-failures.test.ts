import { beforeEach, describe, expect, it } from 'vitest';
import {
  FAKE_MODELS,
  type FakeLlm,
  fakeLlmClient,
  fakeRoster,
  startFakeLlm,
} from '../../test/support/fake-llm.ts';
import { failure, hello, noFallbacks as noFallbacksOn, useFakeLlm } from '../../test/support/llm-client.ts';
import type { Roster } from '../config/index.ts';
import type { OpenAiCompatibleClientOptions } from './openai-client.ts';
import type { LlmCallRecord, LlmErrorClass } from './types.ts';

const useFake = useFakeLlm();
let fake: ReturnType<typeof useFake>;
beforeEach(() => {
  fake = useFake();
});
const noFallbacks = (options: Partial<OpenAiCompatibleClientOptions> = {}) => noFallbacksOn(fake, options);

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

  it('returns invalid tool-call JSON on the call, repaired or with the reason, never as a failure', async () => {
    fake.enqueue(
      { toolCalls: [{ name: 'run', arguments: '{"command": "tasks.list"' }] },
      { toolCalls: [{ name: 'run', arguments: '["tasks.list"]' }] },
      { toolCalls: [{ name: 'run', arguments: 'command=tasks.list' }] },
    );
    const repaired = await noFallbacks().chat(hello);
    expect(repaired.toolCalls[0]).toMatchObject({
      arguments: { command: 'tasks.list' },
      rawArguments: '{"command":"tasks.list"}',
    });
    expect(repaired.toolCalls[0]!.argumentsNote).toContain('repaired');
    const array = await noFallbacks().chat(hello);
    expect(array.toolCalls[0]!.argumentsError).toContain('must be a JSON object');
    const streamed = await noFallbacks().chat({ ...hello, onDelta: () => {} });
    expect(streamed.toolCalls[0]!.argumentsError ?? streamed.toolCalls[0]!.argumentsNote).toContain('run');
    expect(streamed.toolCalls[0]!.rawArguments).not.toBe('command=tasks.list');
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
    // Abort once the request is at the model (on a busy machine that can take a while).
    const arrived = setInterval(() => {
      if (fake.chatRequests.length > 0) controller.abort();
    }, 10);
    const error = await failure(noFallbacks({ maxRetries: 3 }).chat({ ...hello, signal: controller.signal }));
    clearInterval(arrived);
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
    // The cause, not a bare "fetch failed": this text reaches replies, doctor and the log.
    expect(error.message).toContain(`ECONNREFUSED ${new URL(url).host}`);
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
    const fallbacks: unknown[] = [];
    const client = fakeLlmClient(fake, { maxRetries: 1, onFallback: (event) => fallbacks.push(event) });
    const response = await client.chat(hello);
    expect(response.text).toBe('from the fallback');
    expect(response.model).toBe(FAKE_MODELS.fallback);
    expect(fallbacks).toEqual([
      {
        role: 'orchestrator',
        from: FAKE_MODELS.primary,
        to: FAKE_MODELS.fallback,
        errorClass: 'provider_down',
      },
    ]);
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
