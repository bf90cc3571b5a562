import { chmodSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort, runCli, startServer } from './support/cli.ts';

/* `steward security audit --fix` and `--deep`, run as a user runs them. */

type Finding = { id: string; severity: string; message: string; fix: string };

function home() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'steward-audit-deep-'));
  writeFileSync(path.join(dir, 'steward.yaml'), '', { mode: 0o600 });
  return { dir, env: { STEWARD_DATA_DIR: path.join(dir, 'data') } };
}

describe('steward security audit --fix / --deep', { timeout: 180_000 }, () => {
  it('reports a world-readable .env holding tokens, with the Telegram secret explained, and --fix makes it 0600', async () => {
    const { dir, env } = home();
    writeFileSync(
      path.join(dir, '.env'),
      'STEWARD_API_TOKEN=f3a9c1e07b5d42e8a6c0b9d7e1f2a4c6\nTELEGRAM_BOT_TOKEN=123:abc-secret-bot\n',
    );
    chmodSync(path.join(dir, '.env'), 0o644);
    const before = await runCli(['security', 'audit', '--json'], { env, cwd: dir });
    const findings = JSON.parse(before.stdout) as Finding[];
    expect(findings).toContainEqual({
      id: 'env-file-permissions',
      severity: 'high',
      message: `${path.join(dir, '.env')} is readable by other users (mode 0644) and holds STEWARD_API_TOKEN, TELEGRAM_BOT_TOKEN.`,
      fix: `chmod 600 ${path.join(dir, '.env')}`,
    });
    const telegram = findings.find((finding) => finding.id === 'channel-without-webhook-secret');
    expect(telegram?.fix).toContain('Choose a secret yourself');
    expect(telegram?.fix).not.toContain('app settings');
    expect(before.code).toBe(1);
    expect(before.stdout).not.toContain('abc-secret-bot');

    const fixed = await runCli(['security', 'audit', '--fix'], { env, cwd: dir });
    expect(fixed.stdout).toContain(`fixed: chmod 600 ${path.join(dir, '.env')}`);
    expect(fixed.stdout).not.toContain('env-file-permissions');
    expect(statSync(path.join(dir, '.env')).mode & 0o777).toBe(0o600);
  });

  it('--deep finds routes open without a token on the running server, and none once a token is set', async () => {
    const { dir, env } = home();
    const port = String(await freePort());
    const open = await startServer({
      env: { ...env, PORT: port, STEWARD_CONFIG: path.join(dir, 'steward.yaml') },
    });
    let result: Awaited<ReturnType<typeof runCli>>;
    try {
      result = await runCli(['security', 'audit', '--deep', '--json'], {
        env: { ...env, PORT: port },
        cwd: dir,
      });
    } finally {
      await open.stop();
    }
    const findings = JSON.parse(result.stdout) as Finding[];
    const routes = findings.filter((finding) => finding.id === 'open-route');
    expect(routes.map((finding) => finding.message.split(' answered')[0])).toEqual(
      expect.arrayContaining(['GET /api/usage', 'GET /api/tokens', 'GET /api/pairing']),
    );
    expect(routes.every((finding) => finding.severity === 'medium')).toBe(true);
    expect(findings.filter((finding) => finding.id === 'missing-security-header')).toEqual([]);

    const token = { STEWARD_API_TOKEN: 'f3a9c1e07b5d42e8a6c0b9d7e1f2a4c6b8d0' };
    const guarded = await startServer({
      env: { ...env, ...token, PORT: port, STEWARD_CONFIG: path.join(dir, 'steward.yaml') },
    });
    try {
      const text = await runCli(['security', 'audit', '--deep'], {
        env: { ...env, ...token, PORT: port, STEWARD_PUBLIC_URL: 'http://steward.example.org' },
        cwd: dir,
      });
      expect(text.stdout).toContain(`probed the running server at http://127.0.0.1:${port}`);
      expect(text.stdout).not.toContain('open-route');
      expect(text.stdout).toContain('[high] no-tls-in-front');
      expect(text.code).toBe(1);
    } finally {
      await guarded.stop();
    }

    const none = await runCli(['security', 'audit', '--deep', '--json'], {
      env: { ...env, PORT: port },
      cwd: dir,
    });
    expect((JSON.parse(none.stdout) as Finding[]).map((finding) => finding.id)).toContain(
      'deep-server-not-running',
    );
  });
});
