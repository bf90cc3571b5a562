import { describe, expect, it } from 'vitest';
import { flagLines, toolFlags, usageOf } from './tool-flags.ts';
import { actionNameFor, flagNameFor } from './tool-names.ts';

describe('tool names', () => {
  it('keeps valid names and maps others: lower case, other characters to _', () => {
    const taken = new Set<string>();
    expect(actionNameFor('add_note', taken)).toBe('add_note');
    expect(actionNameFor('Get-Item', taken)).toBe('get_item');
    expect(actionNameFor('search.files v2', taken)).toBe('search_files_v2');
    expect(actionNameFor('2fa', taken)).toBe('tool_2fa');
    expect(actionNameFor('_private', taken)).toBe('tool__private');
    expect(actionNameFor('help', taken)).toBe('help_tool');
    expect(actionNameFor('getItem', new Set(['getitem']))).toBe('getitem_2');
  });

  it('turns property names into kebab-case flags filed under the parser key', () => {
    expect(flagNameFor('dueDate')).toEqual({ flag: 'due-date', key: 'due_date' });
    expect(flagNameFor('due_date')).toEqual({ flag: 'due-date', key: 'due_date' });
    expect(flagNameFor('HTTPHeaders')).toEqual({ flag: 'http-headers', key: 'http_headers' });
    expect(flagNameFor('page.size')).toEqual({ flag: 'page-size', key: 'page_size' });
  });
});

describe('flags from an input schema', () => {
  const generated = toolFlags({
    type: 'object',
    properties: {
      title: { type: 'string', description: 'What to call it\nsecond line ignored' },
      dueDate: { type: ['string', 'null'] },
      done: { type: 'boolean' },
      tags: { type: 'array', items: { type: 'string' } },
      counts: { type: 'array', items: { type: 'integer' } },
      ratio: { type: 'number' },
      level: { type: 'string', enum: ['low', 'high'] },
      filter: { type: 'object', properties: { a: { type: 'string' } } },
      anything: {},
    },
    required: ['title', 'level'],
  });
  const parse = (flags: Record<string, unknown>) => generated.schema.safeParse(flags);

  it('documents each flag with its type and a usage line, required first', () => {
    expect(usageOf(generated.flags)).toBe(
      '--title <text> --level <low|high> [--due-date <text>] [--done] [--tags <text>]... [--counts <integer>]... [--ratio <number>] [--filter <json>] [--anything <json>]',
    );
    expect(flagLines(generated.flags)).toContain('- `--title` (string, required) — What to call it');
    expect(flagLines(generated.flags)).toContain('- `--tags` (string list, repeat the flag)');
  });

  it('coerces command values into JSON arguments under the original property names', () => {
    const parsed = parse({
      title: 'Report',
      level: 'high',
      due_date: '2026-01-02',
      done: true,
      tags: ['a,b', 'c'],
      counts: ['1', '2'],
      ratio: '0.5',
      filter: '{"a": "x"}',
      anything: '[1, 2]',
    });
    expect(parsed.success).toBe(true);
    expect(generated.toArguments(parsed.data!)).toEqual({
      title: 'Report',
      level: 'high',
      dueDate: '2026-01-02',
      done: true,
      tags: ['a,b', 'c'],
      counts: [1, 2],
      ratio: 0.5,
      filter: { a: 'x' },
      anything: [1, 2],
    });
    expect(
      generated.toArguments(parse({ title: 'x', level: 'low', tags: 'one', done: 'false' }).data!),
    ).toEqual({
      title: 'x',
      level: 'low',
      tags: ['one'],
      done: false,
    });
  });

  it('rejects what does not fit, naming the flag', () => {
    const issues = (flags: Record<string, unknown>) =>
      parse(flags).error?.issues.map((issue) => [issue.path.join('.'), issue.code, issue.message]);
    expect(issues({ level: 'low' })).toEqual([['title', 'invalid_type', 'required']]);
    expect(issues({ title: 'x', level: 'medium' })).toEqual([
      ['level', 'custom', 'must be one of: low, high'],
    ]);
    expect(issues({ title: 'x', level: 'low', ratio: 'half' })).toEqual([
      ['ratio', 'custom', 'needs a number'],
    ]);
    expect(issues({ title: 'x', level: 'low', counts: ['1.5'] })).toEqual([
      ['counts.0', 'custom', 'needs a whole number'],
    ]);
    expect(issues({ title: 'x', level: 'low', filter: '[1]' })?.[0]?.[0]).toBe('filter');
    expect(issues({ title: 'x', level: 'low', colour: 'red' })?.[0]?.[1]).toBe('unrecognized_keys');
  });
});
