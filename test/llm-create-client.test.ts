import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.ts';
import type { LlmCallRecord } from '../src/llm/index.ts';
import { createLlmClient, LlmError, NotConfiguredClient, OpenAiCompatibleClient } from '../src/llm/index.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';

let fake: FakeLlm;
let cwd: string;

beforeAll(async () => {
  fake = await startFakeLlm({ apiKey: 'local-key' });
  cwd = mkdtempSync(path.join(tmpdir(), 'steward-llm-'));
});
afterAll(async () => {
  await fake.close();
  rmSync(cwd, { recursive: true, force: true });
});

async function llmError(promise: Promise<unknown>): Promise<LlmError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(LlmError);
  return error as LlmError;
}

describe('createLlmClient', () => {
  it('explains how to configure a model when no endpoint is set', async () => {
    const client = createLlmClient(loadConfig({ env: {}, cwd }));
    expect(client).toBeInstanceOf(NotConfiguredClient);
    const error = await llmError(
      client.chat({ role: 'orchestrator', messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(error.errorClass).toBe('not_configured');
    expect(error.message).toMatch(/OPENROUTER_API_KEY/);
    expect(error.message).toMatch(/LLM_BASE_URL/);
    expect(error.message).toMatch(/LLM_MODEL/);
    expect((await llmError(client.embed({ texts: ['x'] }))).errorClass).toBe('not_configured');
  });

  it('talks to an OpenAI-compatible endpoint from LLM_BASE_URL, LLM_API_KEY and LLM_MODEL', async () => {
    const config = loadConfig({
      env: { LLM_BASE_URL: fake.url, LLM_API_KEY: 'local-key', LLM_MODEL: 'llama3.2' },
      cwd,
    });
    const records: LlmCallRecord[] = [];
    const client = createLlmClient(config, { recorder: (record) => void records.push(record) });
    expect(client).toBeInstanceOf(OpenAiCompatibleClient);
    fake.enqueue({ text: 'Hi from the local model' });
    const response = await client.chat({ role: 'sub_agent', messages: [{ role: 'user', content: 'hi' }] });
    expect(response.text).toBe('Hi from the local model');
    expect(fake.chatRequests[0]?.body.model).toBe('llama3.2');
    expect(fake.chatRequests[0]?.headers.authorization).toBe('Bearer local-key');
    expect(fake.chatRequests[0]?.headers['x-title']).toBe('Steward');
    expect(records).toEqual([expect.objectContaining({ role: 'sub_agent', model: 'llama3.2' })]);
    // No embeddings model was configured for this endpoint.
    const error = await llmError(client.embed({ texts: ['x'] }));
    expect(error.errorClass).toBe('not_configured');
    expect(error.message).toContain('LLM_EMBEDDINGS_MODEL');
    fake.assertDone();
  });
});
