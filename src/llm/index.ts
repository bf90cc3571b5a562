import type { ResolvedConfig } from '../config/index.ts';
import type { Logger } from '../logging/index.ts';
import { NotConfiguredClient } from './not-configured.ts';
import { type FallbackListener, OpenAiCompatibleClient } from './openai-client.ts';
import type { LlmClient, UsageRecorder } from './types.ts';

export { classifyStatus, parseRetryAfter } from './classify.ts';
export { LlmError } from './errors.ts';
export { NOT_CONFIGURED_MESSAGE, NotConfiguredClient } from './not-configured.ts';
export {
  type FallbackListener,
  OpenAiCompatibleClient,
  type OpenAiCompatibleClientOptions,
} from './openai-client.ts';
export { backoffDelayMs, type Sleep } from './retry.ts';
export {
  countMessageTokens,
  countTokens,
  countTokensAsync,
  countToolTokens,
  truncateToTokens,
} from './tokens.ts';
export type {
  AudioPart,
  CacheControl,
  CallContext,
  ChatMessage,
  ChatRequest,
  ChatResponse,
  ContentPart,
  EmbedRequest,
  EmbedResponse,
  FinishReason,
  JsonSchema,
  LlmCallRecord,
  LlmClient,
  LlmErrorClass,
  TextPart,
  ToolCall,
  ToolDefinition,
  Usage,
  UsageRecorder,
} from './types.ts';
export { addUsage, costOf, createDbUsageRecorder, emptyUsage, type TokenCounts } from './usage.ts';
export {
  dailyUsage,
  NO_USER,
  spentSince,
  type UsageDay,
  utcDate,
  utcDayStart,
} from './usage-report.ts';

export type CreateLlmClientOptions = {
  recorder?: UsageRecorder;
  onFallback?: FallbackListener;
  logger?: Logger;
  fetch?: typeof fetch;
};

/**
 * The client the configuration asks for: an OpenAI-compatible client when an endpoint is
 * configured, otherwise one whose every call explains how to configure one.
 */
export function createLlmClient(
  config: Pick<ResolvedConfig, 'endpoint' | 'roster' | 'llm'>,
  options: CreateLlmClientOptions = {},
): LlmClient {
  const { endpoint } = config;
  if (endpoint.provider === 'none' || !endpoint.baseUrl) return new NotConfiguredClient();
  return new OpenAiCompatibleClient({
    baseUrl: endpoint.baseUrl,
    apiKey: endpoint.apiKey,
    roster: config.roster,
    roles: config.roster.roles,
    timeoutMs: config.llm.timeout_ms,
    maxRetries: config.llm.max_retries,
    appName: config.llm.app_name,
    ...options,
  });
}
export { type LlmCallRow, llmCallsOfTurn, turnUsageSql } from './calls.ts';
