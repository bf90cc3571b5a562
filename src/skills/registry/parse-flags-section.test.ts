import { describe, expect, it } from 'vitest';
import { parseFlagsSection } from './parse-flags-section.ts';

describe('parseFlagsSection', () => {
  it('reads seed-format flag lines, snake_cases names and spots (required)', () => {
    const body = [
      '# tasks.search',
      '',
      '## Usage',
      '',
      '--not-a-flag   usage lines are not flags',
      '',
      '## Flags',
      '',
      '--query       Free text search (required)',
      '--due-before  Tasks due on or before this date (YYYY-MM-DD)',
      '--overdue     Only overdue tasks (boolean flag)',
      '--limit       Maximum results',
      '              (default: 20) (required)',
      '',
      '## Behavior',
      '',
      '--ignored    after the section',
    ].join('\n');
    expect(parseFlagsSection(body)).toEqual([
      { name: 'query', required: true, description: 'Free text search (required)' },
      { name: 'due_before', required: false, description: 'Tasks due on or before this date (YYYY-MM-DD)' },
      { name: 'overdue', required: false, description: 'Only overdue tasks (boolean flag)' },
      { name: 'limit', required: true, description: 'Maximum results (default: 20) (required)' },
    ]);
  });

  it('accepts flags inside a code fence, as list items or in backticks, and keeps the first of a repeat', () => {
    const body = [
      '## Flags',
      '```',
      '--to   Recipient (required)',
      '```',
      '- `--cc-list` CC recipients',
      '* --to  again',
    ].join('\n');
    expect(parseFlagsSection(body)).toEqual([
      { name: 'to', required: true, description: 'Recipient (required)' },
      { name: 'cc_list', required: false, description: 'CC recipients' },
    ]);
  });

  it('returns no flags when the section is missing', () => {
    expect(parseFlagsSection('# x\n\n## Usage\n\nx --a\n')).toEqual([]);
  });
});
