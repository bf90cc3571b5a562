import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { LlmError } from '../../src/llm/errors.ts';
import type { OpenAiCompatibleClientOptions } from '../../src/llm/openai-client.ts';
import { loadOpenAiSdk } from '../../src/llm/openai-sdk.ts';
import type { ChatRequest } from '../../src/llm/types.ts';
import { FAKE_MODELS, type FakeLlm, fakeLlmClient, startFakeLlm } from './fake-llm.ts';

/**
 * A fake LLM for one test file: started before it, checked strictly (no unconsumed steps, no
 * unexpected requests) after each test, closed after it.
 */
export function useFakeLlm(): () => FakeLlm {
  let fake: FakeLlm | undefined;
  beforeAll(async () => {
    fake = await startFakeLlm();
    // The client loads the SDK on its first call; load it now, so timing-sensitive tests
    // (an abort 50 ms into a request) measure the request, not the import.
    await loadOpenAiSdk();
  });
  afterEach(() => {
    try {
      fake?.assertDone();
    } finally {
      fake?.reset();
    }
  });
  afterAll(async () => {
    await fake?.close();
  });
  return () => {
    if (!fake) throw new Error('fake LLM not started');
    return fake;
  };
}

export const hello: ChatRequest = { role: 'orchestrator', messages: [{ role: 'user', content: 'Hello' }] };

/** The orchestrator role without fallbacks, so a failure surfaces as is. */
export function noFallbacks(fake: FakeLlm, options: Partial<OpenAiCompatibleClientOptions> = {}) {
  return fakeLlmClient(fake, {
    roles: { orchestrator: { model: FAKE_MODELS.primary, fallbacks: [] } },
    ...options,
  });
}

/** The LlmError a call fails with. */
export async function failure(promise: Promise<unknown>): Promise<LlmError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(LlmError);
    return error as LlmError;
  }
  throw new Error('expected the call to fail');
}
