import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/steward.js', import.meta.url));

/** A Node older than 24 on this machine (Debian's, which runs npm here), or null. */
function olderNode(): string | null {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node']) {
    if (!existsSync(candidate)) continue;
    const version = execFileSync(candidate, ['--version'], { encoding: 'utf8' }).trim();
    if (Number(version.replace(/^v/, '').split('.')[0]) < 24) return candidate;
  }
  return null;
}

const node = olderNode();

describe.skipIf(!node)('bin/steward.js on a Node older than 24', () => {
  it('prints one line naming the Node it needs and exits 1, without a stack trace', () => {
    const result = spawnSync(node as string, [BIN, '--version'], { encoding: 'utf8' });
    expect(result.status).toBe(1);
    const output = `${result.stdout}${result.stderr}`.trim();
    expect(output.split('\n')).toHaveLength(1);
    expect(output).toContain('24');
    expect(output).toContain('npx steward');
    expect(output).not.toMatch(/SyntaxError| {4}at /);
  });
});
