import { describe, expect, it } from 'vitest';
import { decodeTokens, encodeTokens } from './bpe.ts';
import { countMessageTokens, countTokens, countToolTokens, truncateToTokens } from './tokens.ts';
import type { ChatMessage, ToolDefinition } from './types.ts';

describe('countTokens', () => {
  it('counts o200k_base tokens', () => {
    expect(countTokens('')).toBe(0);
    expect(countTokens('hello world')).toBe(2);
    expect(countTokens('word '.repeat(100))).toBeGreaterThanOrEqual(100);
  });

  it('gives the tokens js-tiktoken 1.0.21 gives (recorded), and decodes them back to the text', () => {
    const recorded: Array<[string, number[]]> = [
      [
        'Remind me to call Ana at 5pm about the Q3 budget.',
        [6882, 521, 668, 316, 2421, 34207, 540, 220, 20, 6991, 1078, 290, 1486, 18, 9946, 13],
      ],
      [
        'Größe, naïve café — 東京で会いましょう 🙂👍🏽',
        [
          3193, 52715, 11, 153475, 737, 30469, 2733, 185244, 4344, 6016, 3826, 5042, 103554, 26192, 82514,
          52622, 121,
        ],
      ],
      [
        'const x = { a: [1, 2, 3] }; // code\n\tindented\r\n',
        [
          1671, 1215, 314, 354, 261, 25, 723, 16, 11, 220, 17, 11, 220, 18, 60, 47821, 602, 3490, 198, 197,
          521, 23537, 370,
        ],
      ],
      [
        `${'a'.repeat(300)} ${'xyz'.repeat(50)}`,
        [...Array(37).fill(117525), 45037, 82501, ...Array(49).fill(51089)],
      ],
    ];
    for (const [text, tokens] of recorded) {
      expect([...encodeTokens(text)].flat()).toEqual(tokens);
      expect(countTokens(text)).toBe(tokens.length);
      expect(decodeTokens(tokens)).toBe(text);
      expect(truncateToTokens(text, 10_000)).toBe(text);
    }
  });

  it('counts special-token text as plain text instead of throwing', () => {
    expect(countTokens('<|endoftext|>')).toBeGreaterThan(1);
  });
});

describe('countMessageTokens', () => {
  const question: ChatMessage = { role: 'user', content: 'What is on my calendar tomorrow?' };

  it('is the content plus per-message framing', () => {
    const one = countMessageTokens([question]);
    expect(one).toBeGreaterThan(countTokens('What is on my calendar tomorrow?'));
    const two = countMessageTokens([question, { role: 'assistant', content: 'Two meetings.' }]);
    expect(two - one).toBeGreaterThan(countTokens('Two meetings.'));
    expect(countMessageTokens([])).toBe(0);
  });

  it('counts text parts, tool calls and tool results', () => {
    const parts = countMessageTokens([
      {
        role: 'system',
        content: [{ type: 'text', text: 'alpha beta gamma', cache_control: { type: 'ephemeral' } }],
      },
    ]);
    const plain = countMessageTokens([{ role: 'system', content: 'alpha beta gamma' }]);
    expect(parts).toBe(plain);
    const withCall = countMessageTokens([
      {
        role: 'assistant',
        content: null,
        toolCalls: [
          {
            id: 'c1',
            name: 'run',
            arguments: { command: 'tasks.list' },
            rawArguments: '{"command":"tasks.list"}',
          },
        ],
      },
    ]);
    expect(withCall).toBeGreaterThan(countMessageTokens([{ role: 'assistant', content: null }]));
    const toolResult = countMessageTokens([{ role: 'tool', toolCallId: 'c1', content: 'three open tasks' }]);
    expect(toolResult).toBeGreaterThan(countTokens('three open tasks'));
  });

  it('estimates audio from its size', () => {
    const seconds = (n: number) => Buffer.alloc(32_000 * n).toString('base64');
    const short = countMessageTokens([
      { role: 'user', content: [{ type: 'input_audio', input_audio: { data: seconds(1), format: 'wav' } }] },
    ]);
    const long = countMessageTokens([
      { role: 'user', content: [{ type: 'input_audio', input_audio: { data: seconds(10), format: 'wav' } }] },
    ]);
    expect(long).toBeGreaterThan(short * 5);
  });
});

describe('countToolTokens', () => {
  it('counts the tools as serialized on the wire', () => {
    const tool: ToolDefinition = {
      name: 'run',
      description: 'Run a skill command',
      parameters: { type: 'object', properties: { command: { type: 'string' } } },
      cacheControl: { type: 'ephemeral' },
    };
    const wire = JSON.stringify({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    });
    expect(countToolTokens([tool])).toBe(countTokens(wire));
    expect(countToolTokens([tool, tool])).toBe(2 * countTokens(wire));
    expect(countToolTokens([])).toBe(0);
  });
});

describe('truncateToTokens', () => {
  const text = 'The quick brown fox jumps over the lazy dog. '.repeat(20);

  it('cuts to at most the budget, keeping a prefix', () => {
    const cut = truncateToTokens(text, 15);
    expect(countTokens(cut)).toBeLessThanOrEqual(15);
    expect(countTokens(cut)).toBeGreaterThanOrEqual(14);
    expect(text.startsWith(cut)).toBe(true);
  });

  it('leaves short text alone and returns nothing for a zero budget', () => {
    expect(truncateToTokens('short text', 100)).toBe('short text');
    expect(truncateToTokens(text, 0)).toBe('');
  });

  it('never leaves half a character behind', () => {
    const emoji = '🦊🦊🦊🦊🦊🦊🦊🦊';
    for (let budget = 1; budget < countTokens(emoji); budget++) {
      const cut = truncateToTokens(emoji, budget);
      expect(cut).not.toContain('\uFFFD');
      expect(emoji.startsWith(cut)).toBe(true);
    }
  });
});
