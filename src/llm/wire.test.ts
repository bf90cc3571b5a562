import { describe, expect, it } from 'vitest';
import { LlmError } from './errors.ts';
import type { ChatMessage, ChatRequest } from './types.ts';
import { parseCompletion, parseUsage, StreamAccumulator, toWireBody, toWireJson } from './wire.ts';

function thrown(fn: () => unknown): LlmError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(LlmError);
    return error as LlmError;
  }
  throw new Error('expected a throw');
}

describe('parseUsage', () => {
  it('reads OpenRouter cache fields', () => {
    expect(
      parseUsage({
        prompt_tokens: 100,
        completion_tokens: 5,
        prompt_tokens_details: { cached_tokens: 60, cache_write_tokens: 30 },
      }),
    ).toEqual({ promptTokens: 100, completionTokens: 5, cachedTokens: 60, cacheWriteTokens: 30 });
  });

  it('accepts Anthropic-style cache-write fields passed through by gateways', () => {
    expect(parseUsage({ prompt_tokens: 100, cache_creation_input_tokens: 40 }).cacheWriteTokens).toBe(40);
    expect(parseUsage({ prompt_tokens: 100, cache_write_tokens: 25 }).cacheWriteTokens).toBe(25);
  });

  it('is all zeros without usage', () => {
    expect(parseUsage(undefined)).toEqual({
      promptTokens: 0,
      completionTokens: 0,
      cachedTokens: 0,
      cacheWriteTokens: 0,
    });
  });
});

describe('parseCompletion', () => {
  const ok = (message: Record<string, unknown>) => ({ choices: [{ message, finish_reason: 'stop' }] });

  it('classifies an error object in a 200 body by its code', () => {
    const error = thrown(() => parseCompletion({ error: { code: 502, message: 'upstream died' } }, 'm'));
    expect(error.errorClass).toBe('provider_down');
    expect(error.message).toContain('upstream died');
    expect(thrown(() => parseCompletion({ error: { message: '?' } }, 'm')).errorClass).toBe('bad_response');
  });

  it('treats empty tool arguments as no arguments', () => {
    const parsed = parseCompletion(
      ok({
        content: null,
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'get_skill', arguments: '' } }],
      }),
      'm',
    );
    expect(parsed.toolCalls).toEqual([{ id: 'c', name: 'get_skill', arguments: {}, rawArguments: '{}' }]);
  });

  it('joins text content parts and maps unknown finish reasons to other', () => {
    const parsed = parseCompletion(
      {
        choices: [
          {
            message: {
              content: [
                { type: 'text', text: 'a' },
                { type: 'text', text: 'b' },
              ],
            },
            finish_reason: 'eos',
          },
        ],
      },
      'm',
    );
    expect(parsed.text).toBe('ab');
    expect(parsed.finishReason).toBe('other');
  });

  it('rejects a tool call without a name', () => {
    const body = ok({ tool_calls: [{ id: 'c', type: 'function', function: { arguments: '{}' } }] });
    expect(thrown(() => parseCompletion(body, 'm')).errorClass).toBe('bad_response');
  });
});

describe('StreamAccumulator', () => {
  it('fails a stream that ends before a finish reason', () => {
    const accumulator = new StreamAccumulator('m', () => {});
    accumulator.add({ choices: [{ index: 0, delta: { content: 'half an ans' }, finish_reason: null }] });
    expect(thrown(() => accumulator.finish()).errorClass).toBe('bad_response');
  });
});

describe('toWireJson', () => {
  const history: ChatMessage = {
    role: 'user',
    content: [{ type: 'text', text: 'earlier "quoted" words\n' }],
  };
  Object.freeze(history.content);
  Object.freeze(history);
  const request = (messages: ChatMessage[]): ChatRequest => ({
    role: 'orchestrator',
    messages,
    tools: [{ name: 'run', description: 'Runs a command.', parameters: { type: 'object' } }],
    sessionId: 'c1',
    onDelta: () => {},
  });

  it('is toWireBody as JSON text, its keys in the same order', () => {
    const messages: ChatMessage[] = [
      {
        role: 'system',
        content: [
          { type: 'text', text: 'You are Steward.', cache_control: { type: 'ephemeral', ttl: '1h' } },
        ],
      },
      history,
      {
        role: 'assistant',
        content: null,
        toolCalls: [{ id: 't1', name: 'run', arguments: { command: 'x' }, rawArguments: '{"command":"x"}' }],
      },
      { role: 'tool', toolCallId: 't1', content: 'done', cacheControl: { type: 'ephemeral' } },
    ];
    const text = toWireJson(request(messages), 'model/a');
    expect(text).toBe(JSON.stringify(toWireBody(request(messages), 'model/a')));
    expect(toWireJson({ role: 'compaction', messages: [history] }, 'm')).toBe(
      JSON.stringify(toWireBody({ role: 'compaction', messages: [history] }, 'm')),
    );
  });

  it('sends a frozen message as its JSON of the first time; any other message as it is now', () => {
    const live: ChatMessage = { role: 'user', content: 'now' };
    expect(toWireJson(request([history, live]), 'm')).toContain('"content":"now"');
    (live as { content: string }).content = 'changed';
    const again = JSON.parse(toWireJson(request([history, live]), 'm')) as { messages: unknown[] };
    expect(again.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'earlier "quoted" words\n' }] },
      { role: 'user', content: 'changed' },
    ]);
  });
});
