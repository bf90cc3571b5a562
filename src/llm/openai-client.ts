import type OpenAI from 'openai';
import type { Stream } from 'openai/core/streaming';
import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources';
import { modelFor, type Role, type Roster } from '../config/index.ts';
import { errorMessage } from '../errors.ts';
import { type Logger, silentLogger } from '../logging/index.ts';
import { toLlmError } from './classify.ts';
import { LlmError } from './errors.ts';
import { loadOpenAiSdk } from './openai-sdk.ts';
import { abortableSleep, backoffDelayMs, type Sleep } from './retry.ts';
import type {
  CallContext,
  ChatRequest,
  ChatResponse,
  EmbedRequest,
  EmbedResponse,
  LlmCallRecord,
  LlmClient,
  Usage,
  UsageRecorder,
} from './types.ts';
import { undiciFetch } from './undici-fetch.ts';
import { costOf, emptyUsage, type TokenCounts } from './usage.ts';
import { type ParsedCompletion, parseCompletion, StreamAccumulator, toWireJson } from './wire.ts';

const CHAT_COMPLETIONS = '/chat/completions';

export type OpenAiCompatibleClientOptions = {
  /** OpenRouter's https://openrouter.ai/api/v1, or any OpenAI-compatible base URL. */
  baseUrl: string;
  /** Null for local servers that need none (Ollama, LM Studio). */
  apiKey: string | null;
  roster: Roster;
  /** Which model serves each role, and its fallbacks. Defaults to `roster.roles`. */
  roles?: Roster['roles'];
  /** Deadline of one attempt; for a stream, the longest silence between two chunks. */
  timeoutMs: number;
  /** Retries per model for rate_limit / provider_down / timeout / bad_response. */
  maxRetries: number;
  /** Sent as OpenRouter's X-Title attribution header (HTTP-Referer is derived from it). */
  appName: string;
  recorder?: UsageRecorder;
  /** Told when a role moves on to a fallback model after its model failed. Must not throw. */
  onFallback?: FallbackListener;
  fetch?: typeof fetch;
  sleep?: Sleep;
  /** Uniform in [0, 1); drives the backoff jitter. */
  random?: () => number;
  now?: () => number;
  logger?: Logger;
};

export type FallbackListener = (event: { role: Role; from: string; to: string; errorClass: string }) => void;

type Attempt<T> = (model: string, signal: AbortSignal, touch: () => void) => Promise<T>;
type AttemptResult = { tokens: TokenCounts };

/** Header values must be ASCII; `appName` is user text. */
function asciiHeader(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '').trim() || 'Steward';
}

function refererFor(appName: string): string {
  const slug = asciiHeader(appName)
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
  return `https://${slug || 'steward'}.local/`;
}

function missingModel(role: Role): LlmError {
  const env = role === 'embeddings' ? 'LLM_EMBEDDINGS_MODEL' : 'LLM_MODEL';
  return new LlmError(
    'not_configured',
    `No model is configured for the ${role} role. Set llm.roles.${role}.model in steward.yaml, or ${env}.`,
  );
}

/**
 * An LlmClient over any OpenAI-compatible chat-completions endpoint (OpenRouter first).
 * Retries transient failures with backoff, then walks the role's fallback models; records every
 * attempt; always throws LlmError, whose message never contains the API key.
 */
export class OpenAiCompatibleClient implements LlmClient {
  #sdk: OpenAI | null = null;
  readonly #sdkOptions: ConstructorParameters<typeof OpenAI>[0];
  readonly #roster: Roster;
  readonly #roles: Roster['roles'];
  readonly #timeoutMs: number;
  readonly #maxRetries: number;
  readonly #secrets: string[];
  readonly #recorder: UsageRecorder | null;
  readonly #onFallback: FallbackListener | null;
  readonly #sleep: Sleep;
  readonly #random: () => number;
  readonly #now: () => number;
  readonly #logger: Logger;

  constructor(options: OpenAiCompatibleClientOptions) {
    this.#roster = options.roster;
    this.#roles = options.roles ?? options.roster.roles;
    this.#timeoutMs = options.timeoutMs;
    this.#maxRetries = Math.max(0, Math.floor(options.maxRetries));
    this.#secrets = options.apiKey ? [options.apiKey] : [];
    this.#recorder = options.recorder ?? null;
    this.#onFallback = options.onFallback ?? null;
    this.#sleep = options.sleep ?? abortableSleep;
    this.#random = options.random ?? Math.random;
    this.#now = options.now ?? Date.now;
    this.#logger = options.logger ?? silentLogger();
    this.#sdkOptions = {
      // The SDK insists on a key; local servers ignore the header.
      apiKey: options.apiKey || 'none',
      baseURL: options.baseUrl,
      organization: null,
      project: null,
      timeout: options.timeoutMs,
      // Retries are ours: they must be classified, recorded, and followed by fallbacks.
      maxRetries: 0,
      logLevel: 'off',
      defaultHeaders: {
        'HTTP-Referer': refererFor(options.appName),
        'X-Title': asciiHeader(options.appName),
      },
      ...(options.fetch ? { fetch: options.fetch } : {}),
    };
  }

  /** The SDK client, created on the first call (the SDK itself is loaded then). */
  async #client(): Promise<OpenAI> {
    if (!this.#sdk) {
      const [{ default: OpenAiSdk }, { request }] = await Promise.all([loadOpenAiSdk(), import('undici')]);
      this.#sdk ??= new OpenAiSdk({ fetch: undiciFetch(request), ...this.#sdkOptions });
    }
    return this.#sdk;
  }

  async chat(request: ChatRequest): Promise<ChatResponse> {
    const onDelta = request.onDelta;
    const safeDelta = (text: string) => {
      try {
        onDelta?.(text);
      } catch (error) {
        this.#logger.warn({ err: errorMessage(error) }, 'onDelta callback threw; the stream continues');
      }
    };
    const { model, result, usage, latencyMs } = await this.#run(
      request.role,
      this.#modelChain(request.role, request.model),
      request.signal,
      request.context,
      async (model, signal, touch): Promise<ParsedCompletion> => {
        const options = {
          body: toWireJson(request, model),
          headers: { 'content-type': 'application/json' },
          signal,
          maxRetries: 0,
          timeout: this.#timeoutMs,
        };
        const sdk = await this.#client();
        // The SDK's generic POST, not `chat.completions.create`: that method serializes every
        // request body through a JSON.stringify replacer (a JavaScript call per key and value,
        // for body observers Steward does not use): 5 % of an engine turn's CPU, 4 % without.
        // The body goes as JSON text (the SDK sends text with a content type as it is), so the
        // history's JSON is not made again for every call (toWireJson). The request, its
        // headers, retries and SSE parsing are the same.
        if (!request.onDelta) {
          return parseCompletion(await sdk.post<ChatCompletion>(CHAT_COMPLETIONS, options), model);
        }
        const stream = await sdk.post<Stream<ChatCompletionChunk>>(CHAT_COMPLETIONS, {
          ...options,
          stream: true,
        });
        const accumulator = new StreamAccumulator(model, safeDelta);
        for await (const chunk of stream) {
          // Chunks already buffered when the caller aborted are not delivered.
          if (signal.aborted) break;
          touch();
          accumulator.add(chunk);
        }
        return accumulator.finish();
      },
    );
    return {
      model,
      text: result.text,
      toolCalls: result.toolCalls,
      finishReason: result.finishReason,
      usage,
      latencyMs,
    };
  }

  async embed(request: EmbedRequest): Promise<EmbedResponse> {
    const role: Role = 'embeddings';
    const models = this.#modelChain(role, request.model);
    if (request.texts.length === 0) return { model: models[0]!, vectors: [], usage: emptyUsage() };
    const { model, result, usage } = await this.#run(
      role,
      models,
      request.signal,
      request.context,
      async (model, signal) => {
        const sdk = await this.#client();
        const response = await sdk.embeddings.create(
          { model, input: request.texts, encoding_format: 'float' },
          { signal, maxRetries: 0, timeout: this.#timeoutMs },
        );
        return parseEmbeddings(response, request.texts.length, model);
      },
    );
    return { model, vectors: result.vectors, usage };
  }

  #modelChain(role: Role, override: string | undefined): string[] {
    const spec = this.#roles[role];
    const primary = override ?? spec?.model;
    if (!primary) throw missingModel(role);
    return [...new Set([primary, ...(spec?.fallbacks ?? [])])];
  }

  /** Tries each model in turn, each with retries; returns the first success. */
  async #run<T extends AttemptResult>(
    role: Role,
    models: string[],
    signal: AbortSignal | undefined,
    context: CallContext | undefined,
    attempt: Attempt<T>,
  ): Promise<{ model: string; result: T; usage: Usage; latencyMs: number }> {
    let lastError: LlmError | null = null;
    let index = 0;
    while (index < models.length) {
      const model = models[index]!;
      for (let retry = 0; ; retry++) {
        try {
          return await this.#attempt(role, model, signal, context, attempt);
        } catch (error) {
          lastError = error as LlmError;
        }
        if (lastError.errorClass === 'aborted') throw lastError;
        if (!lastError.retryable || retry >= this.#maxRetries) break;
        const delay = backoffDelayMs(retry, lastError.retryAfterSeconds, this.#random);
        this.#logger.info(
          { model, role, errorClass: lastError.errorClass, delayMs: delay },
          'retrying LLM call',
        );
        try {
          await this.#sleep(delay, signal);
        } catch {
          throw new LlmError('aborted', `The call to ${model} was cancelled`, { model });
        }
        if (signal?.aborted) throw new LlmError('aborted', `The call to ${model} was cancelled`, { model });
      }
      index = this.#nextModel(models, index, lastError);
      if (index < models.length) {
        this.#logger.warn(
          { role, failed: model, next: models[index], errorClass: lastError.errorClass },
          'LLM model failed; trying fallback',
        );
        try {
          this.#onFallback?.({ role, from: model, to: models[index]!, errorClass: lastError.errorClass });
        } catch (error) {
          this.#logger.warn({ err: errorMessage(error) }, 'fallback listener failed');
        }
      }
    }
    throw lastError ?? missingModel(role);
  }

  /** Index of the next model to try after `models[index]` failed with `error`, or `models.length` to stop. */
  #nextModel(models: string[], index: number, error: LlmError): number {
    if (error.retryable) return index + 1;
    if (error.errorClass !== 'context_length') return models.length;
    // Only a model with a larger window can succeed where this one overflowed.
    const window = modelFor(this.#roster, models[index]!).context_window;
    const larger = models.findIndex(
      (id, i) => i > index && modelFor(this.#roster, id).context_window > window,
    );
    return larger === -1 ? models.length : larger;
  }

  /** One HTTP attempt with its own deadline; records it; throws LlmError. */
  async #attempt<T extends AttemptResult>(
    role: Role,
    model: string,
    callerSignal: AbortSignal | undefined,
    context: CallContext | undefined,
    attempt: Attempt<T>,
  ): Promise<{ model: string; result: T; usage: Usage; latencyMs: number }> {
    if (callerSignal?.aborted) throw new LlmError('aborted', `The call to ${model} was cancelled`, { model });
    const controller = new AbortController();
    let timedOut = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const touch = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = true;
        controller.abort(new Error('timeout'));
      }, this.#timeoutMs);
    };
    const onCallerAbort = () => controller.abort(callerSignal?.reason);
    callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
    touch();
    const started = this.#now();
    try {
      const result = await attempt(model, controller.signal, touch);
      const latencyMs = this.#now() - started;
      const usage: Usage = { ...result.tokens, cost: costOf(modelFor(this.#roster, model), result.tokens) };
      await this.#record({ ...context, role, model, usage, latencyMs });
      return { model, result, usage, latencyMs };
    } catch (error) {
      const latencyMs = this.#now() - started;
      const llmError = toLlmError(error, {
        model,
        secrets: this.#secrets,
        callerAborted: callerSignal?.aborted ?? false,
        timedOut,
        timeoutMs: this.#timeoutMs,
      });
      await this.#record({
        ...context,
        role,
        model,
        usage: emptyUsage(),
        latencyMs,
        errorClass: llmError.errorClass,
        error: llmError.message,
      });
      throw llmError;
    } finally {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onCallerAbort);
    }
  }

  async #record(record: LlmCallRecord): Promise<void> {
    if (!this.#recorder) return;
    try {
      await this.#recorder(record);
    } catch (error) {
      this.#logger.warn({ err: errorMessage(error), model: record.model }, 'usage recorder failed');
    }
  }
}

function parseEmbeddings(
  response: unknown,
  expected: number,
  model: string,
): { vectors: number[][]; tokens: TokenCounts } {
  const body = response as { data?: unknown; usage?: { prompt_tokens?: unknown } } | null;
  const data = body?.data;
  if (!Array.isArray(data) || data.length !== expected) {
    throw new LlmError(
      'bad_response',
      `${model} returned ${Array.isArray(data) ? data.length : 'no'} embeddings for ${expected} texts`,
      {
        model,
      },
    );
  }
  const vectors: number[][] = new Array(expected);
  for (const [position, item] of data.entries()) {
    const entry = item as { index?: unknown; embedding?: unknown } | null;
    const index = typeof entry?.index === 'number' ? entry.index : position;
    const embedding = entry?.embedding;
    if (
      !Array.isArray(embedding) ||
      !embedding.every((value) => typeof value === 'number') ||
      index >= expected
    ) {
      throw new LlmError('bad_response', `${model} returned an embedding that is not a list of numbers`, {
        model,
      });
    }
    vectors[index] = embedding;
  }
  for (let index = 0; index < expected; index++) {
    if (vectors[index] === undefined)
      throw new LlmError('bad_response', `${model} returned embeddings with missing indexes`, { model });
  }
  const promptTokens = typeof body?.usage?.prompt_tokens === 'number' ? body.usage.prompt_tokens : 0;
  return { vectors, tokens: { promptTokens, cachedTokens: 0, cacheWriteTokens: 0, completionTokens: 0 } };
}
