import { LlmError } from './errors.ts';
import type { ChatRequest, ChatResponse, EmbedRequest, EmbedResponse, LlmClient } from './types.ts';

export const NOT_CONFIGURED_MESSAGE =
  'No language model is configured. Set OPENROUTER_API_KEY to use OpenRouter, or set LLM_BASE_URL ' +
  '(plus LLM_API_KEY if the endpoint needs one) and LLM_MODEL to use any OpenAI-compatible server ' +
  '(Ollama, vLLM, LM Studio, OpenAI), then restart Steward.';

/** Stands in when no endpoint is configured: every call fails with instructions, never a crash. */
export class NotConfiguredClient implements LlmClient {
  async chat(_request: ChatRequest): Promise<ChatResponse> {
    throw new LlmError('not_configured', NOT_CONFIGURED_MESSAGE);
  }

  async embed(_request: EmbedRequest): Promise<EmbedResponse> {
    throw new LlmError('not_configured', NOT_CONFIGURED_MESSAGE);
  }
}
