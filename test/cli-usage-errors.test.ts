import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from './support/cli.ts';

const home = mkdtempSync(path.join(os.tmpdir(), 'steward-usage-'));
const env = { STEWARD_DATA_DIR: path.join(home, 'data') };

describe('a mistyped command', () => {
  it('gets a short error naming the closest command and one line on --help, not the whole help', async () => {
    const result = await runCli(['strat'], { env, cwd: home });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("unknown command 'strat'");
    expect(result.stderr).toContain('Did you mean start?');
    expect(result.stderr).toContain('steward --help');
    expect(result.stderr).not.toContain('Usage:');
    expect(result.stderr).not.toContain('Commands:');
    expect(result.stderr.trim().split('\n').length).toBeLessThanOrEqual(3);
  });

  it('names the sub-command group in the --help line for a mistyped sub-command', async () => {
    const result = await runCli(['skills', 'lst'], { env, cwd: home });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Did you mean list?');
    expect(result.stderr).toContain('steward skills --help');
    expect(result.stderr).not.toContain('Usage:');
  });

  it('still prints the whole help when asked for it', async () => {
    const result = await runCli(['--help'], { env, cwd: home });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Commands:');
  });
});
