import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from './support/cli.ts';

/*
 * `steward security audit` as a user runs it: the configuration the CLI loads, JSON or text,
 * exit 1 on any high or critical finding (2 for a configuration error), and no secret printed.
 */

const STRONG = 'f3a9c1e07b5d42e8a6c0b9d7e1f2a4c6b8d0e2f4a6c8e0b2';

function home(yaml = '') {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'steward-audit-cli-'));
  writeFileSync(path.join(dir, 'steward.yaml'), yaml, { mode: 0o600 });
  const env = { STEWARD_DATA_DIR: path.join(dir, 'data') };
  return {
    dir,
    env,
    audit: (args: string[], extra: Record<string, string> = {}) =>
      runCli(['security', 'audit', ...args], { env: { ...env, ...extra }, cwd: dir }),
  };
}

type Finding = { id: string; severity: string; message: string; fix: string };

describe('steward security audit', () => {
  it('prints [{id, severity, message, fix}] and exits 1 on a high finding, with or without --json', async () => {
    const steward = home(`api_token: ${STRONG}\n`);
    const json = await steward.audit(['--json'], {
      HOST: '0.0.0.0',
      SLACK_BOT_TOKEN: 'xoxb-secret-bot-token',
    });
    expect(json.code, json.stderr).toBe(1);
    const findings = JSON.parse(json.stdout) as Finding[];
    for (const finding of findings) {
      expect(Object.keys(finding).sort()).toEqual(['fix', 'id', 'message', 'severity']);
      expect(['low', 'medium', 'high', 'critical']).toContain(finding.severity);
      expect(finding.id).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
    }
    expect(findings.map((finding) => finding.id)).toEqual(
      expect.arrayContaining(['secret-in-config-file', 'channel-without-webhook-secret']),
    );
    expect(json.stdout).not.toContain(STRONG);
    expect(json.stdout).not.toContain('xoxb-secret-bot-token');

    const text = await steward.audit([], { HOST: '0.0.0.0', SLACK_BOT_TOKEN: 'xoxb-secret-bot-token' });
    expect(text.code).toBe(1);
    expect(text.stdout).toContain(
      '[high] secret-in-config-file: steward.yaml holds secret values at api_token',
    );
    expect(text.stdout).toMatch(/\d+ findings: .*high/);
    expect(text.stdout).not.toContain(STRONG);
  }, 60_000);

  it('reports a public bind without a token as critical', async () => {
    const result = await home().audit(['--json'], { HOST: '0.0.0.0' });
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toContainEqual(
      expect.objectContaining({ id: 'no-api-token-public-bind', severity: 'critical' }),
    );
  }, 60_000);

  it('exits 0 when nothing is high, and the data dir Steward creates is private', async () => {
    const steward = home();
    const created = await runCli(['run', 'get_skill'], {
      env: { ...steward.env, STEWARD_API_TOKEN: STRONG },
      cwd: steward.dir,
    });
    expect(created.code, created.stderr).toBe(0);
    expect(statSync(steward.env.STEWARD_DATA_DIR).mode & 0o777).toBe(0o700);
    const result = await steward.audit(['--json'], { STEWARD_API_TOKEN: STRONG });
    expect(result.code, result.stdout).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([]);
    const text = await steward.audit([], { STEWARD_API_TOKEN: STRONG });
    expect(text.stdout).toBe('No findings.\n');
  }, 120_000);

  it('keeps an api_token under 16 characters a configuration error (exit 2)', async () => {
    const result = await home().audit(['--json'], { STEWARD_API_TOKEN: 'too-short' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('STEWARD_API_TOKEN: must be at least 16 characters');
    expect(result.stdout).toBe('');
  }, 60_000);
});
