import { describe, expect, it } from 'vitest';
import { flagRows, skillHelp, skillName } from './skill-help.ts';

describe('skill help on the Skills page', () => {
  it('reads a Flags section into rows, continuation lines included', () => {
    expect(
      flagRows(
        '\n--title        Short title (required)\n--due          Due date:\n               YYYY-MM-DD or today\n--me\n',
      ),
    ).toEqual([
      { flag: '--title', meaning: 'Short title (required)', required: true },
      { flag: '--due', meaning: 'Due date: YYYY-MM-DD or today', required: false },
      { flag: '--me', meaning: '', required: false },
    ]);
    expect(flagRows('Takes no flags.')).toBeNull();
  });

  it('renders flags as a table, usage and examples as commands, and the rest as escaped markdown', async () => {
    const page = String(
      await skillHelp(
        '# tasks.create\n\nCreate a <b>task</b>.\n\n## Usage\n\ntasks.create --title <text>\n\n## Flags\n\n--title   Short title (required)\n--due     Due date\n\n## Examples\n\ntasks.create --title "A"\ntasks.create --title "B"\n',
      ),
    );
    expect(page).toContain('<table class="flags">');
    expect(page).toContain('<tr><td><code>--title</code></td><td>Short title</td><td>yes</td></tr>');
    expect(page).toContain('<tr><td><code>--due</code></td><td>Due date</td><td></td></tr>');
    // Each word of a command keeps together: a line wraps between words, never inside `--title`.
    expect(page).toContain(
      '<pre class="commands"><code><span class="token">tasks.create</span> <span class="token">--title</span> <span class="token">&lt;text&gt;</span></code></pre>',
    );
    expect(page).toContain(
      '<span class="token">&quot;A&quot;</span>\n<span class="token">tasks.create</span>',
    );
    expect(page).toContain('Create a &lt;b&gt;task&lt;/b&gt;.');
    expect(page).not.toContain('<b>');
  });

  it('breaks a skill name only after a dot or underscore', async () => {
    expect(String(await skillName('workflows.daily_digest'))).toBe(
      '<code class="skill-name">workflows.<wbr>daily_<wbr>digest</code>',
    );
  });
});
