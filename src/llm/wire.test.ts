import { describe, expect, it } from 'vitest';
import { LlmError } from './errors.ts';
import { parseCompletion, parseUsage, StreamAccumulator } from './wire.ts';

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
