import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config/index.ts';
import { auditConfiguration } from './audit.ts';
import { satisfies } from './dependency-advisories.ts';
import type { Finding } from './finding.ts';

const STRONG = 'f3a9c1e07b5d42e8a6c0b9d7e1f2a4c6b8d0e2f4a6c8e0b2';

/** A fresh home with a private data dir, an optional steward.yaml and a clean package-lock. */
function home(yaml?: string) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'steward-audit-'));
  mkdirSync(path.join(dir, 'data'), { mode: 0o700 });
  if (yaml !== undefined) writeFileSync(path.join(dir, 'steward.yaml'), yaml, { mode: 0o600 });
  writeFileSync(
    path.join(dir, 'package-lock.json'),
    JSON.stringify({ packages: { '': {}, 'node_modules/cross-spawn': { version: '7.0.6' } } }),
  );
  return dir;
}

function audit(dir: string, env: Record<string, string> = {}): Finding[] {
  const config = loadConfig({ env, cwd: dir });
  return auditConfiguration(config, { installDir: dir, cwd: dir });
}

const ids = (findings: Finding[]) => findings.map((finding) => `${finding.severity} ${finding.id}`);

describe('security audit', () => {
  it('has nothing serious to say about a private, token-protected setup', () => {
    const findings = audit(home(), { STEWARD_API_TOKEN: STRONG });
    expect(findings).toEqual([]);
  });

  it('flags a public bind without a token as critical, and a loopback one without a token as low', () => {
    expect(ids(audit(home(), { HOST: '0.0.0.0' }))).toEqual(['critical no-api-token-public-bind']);
    expect(ids(audit(home()))).toEqual(['low no-api-token']);
  });

  it('flags short and guessable tokens and keys without printing them', () => {
    const short = 'Zq8#rT2!vL9@xW4k';
    const findings = audit(home(), {
      STEWARD_API_TOKEN: short,
      STEWARD_SECRET_KEY: 'changeme-changeme',
    });
    expect(ids(findings)).toEqual(['high secret-key-weak', 'medium api-token-short']);
    expect(JSON.stringify(findings)).not.toContain(short);
    expect(JSON.stringify(findings)).not.toContain('changeme-changeme');
    expect(ids(audit(home(), { STEWARD_API_TOKEN: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' }))).toEqual([
      'high api-token-weak',
    ]);
    expect(ids(audit(home(), { STEWARD_API_TOKEN: '0123456789abcdefghijklmnopqrstuvwxyz' }))).toEqual([
      'high api-token-weak',
    ]);
  });

  it('flags channels configured without the secret that verifies their webhooks', () => {
    const findings = audit(home(), {
      STEWARD_API_TOKEN: STRONG,
      SLACK_BOT_TOKEN: 'xoxb-1-2-3',
      WHATSAPP_ACCESS_TOKEN: 'EAAG-token',
      WHATSAPP_VERIFY_TOKEN: 'verify-me-please-123',
      GOOGLE_CHAT_SERVICE_ACCOUNT: '/etc/steward/chat.json',
      TELEGRAM_BOT_TOKEN: '123:abc',
    });
    expect(findings.filter((finding) => finding.id === 'channel-without-webhook-secret')).toEqual([
      expect.objectContaining({
        severity: 'high',
        message: expect.stringContaining('Google Chat is configured without GOOGLE_CHAT_PROJECT_NUMBER'),
      }),
      expect.objectContaining({
        severity: 'high',
        message: expect.stringContaining('Slack is configured without SLACK_SIGNING_SECRET'),
      }),
      expect.objectContaining({
        severity: 'high',
        message: expect.stringContaining('WhatsApp is configured without WHATSAPP_APP_SECRET'),
      }),
      expect.objectContaining({
        severity: 'low',
        message: expect.stringContaining('Telegram is configured without TELEGRAM_WEBHOOK_SECRET'),
      }),
    ]);
    const verified = audit(home(), {
      STEWARD_API_TOKEN: STRONG,
      SLACK_BOT_TOKEN: 'xoxb-1-2-3',
      SLACK_SIGNING_SECRET: 'signing',
      TELEGRAM_BOT_TOKEN: '123:abc',
      TELEGRAM_WEBHOOK_SECRET: 'short',
    });
    expect(ids(verified)).toEqual(['medium webhook-secret-short']);
  });

  it("judges only the configuration it loaded: this process's environment and defaulted URLs do not count", () => {
    const saved = { ...process.env };
    Object.assign(process.env, {
      SLACK_BOT_TOKEN: 'xoxb-from-the-machine',
      GOOGLE_CHAT_SERVICE_ACCOUNT: '/x.json',
    });
    try {
      expect(
        audit(home(), { STEWARD_API_TOKEN: STRONG, GOOGLE_CHAT_API_URL: 'https://chat.example.com' }),
      ).toEqual([]);
    } finally {
      for (const name of ['SLACK_BOT_TOKEN', 'GOOGLE_CHAT_SERVICE_ACCOUNT']) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
    }
    const partly = audit(home('channels:\n  googlechat:\n    service_account: /etc/steward/chat.json\n'), {
      STEWARD_API_TOKEN: STRONG,
    });
    expect(ids(partly)).toEqual(['high channel-without-webhook-secret']);
  });

  it('flags an email channel that trusts the From header, and nothing while senders are verified', () => {
    const mailbox = {
      STEWARD_API_TOKEN: STRONG,
      EMAIL_CHANNEL: 'on',
      EMAIL_IMAP_URL: 'imaps://steward:pass@mail.example.com',
      EMAIL_SMTP_URL: 'smtps://steward:pass@mail.example.com',
      EMAIL_FROM: 'steward@example.com',
    };
    expect(ids(audit(home(), mailbox))).toEqual([]);
    expect(ids(audit(home(), { ...mailbox, EMAIL_REQUIRE_AUTHENTICATION: 'off' }))).toEqual([
      'high email-channel-trusts-from',
    ]);
  });

  it('flags a data dir or key file other users can read, and nothing once they are private', () => {
    const dir = home();
    const data = path.join(dir, 'data');
    const key = path.join(data, 'secret.key');
    writeFileSync(key, 'k'.repeat(32), { mode: 0o644 });
    chmodSync(key, 0o644);
    chmodSync(data, 0o755);
    const findings = audit(dir, { STEWARD_API_TOKEN: STRONG });
    expect(ids(findings)).toEqual(['high data-dir-permissions', 'high key-file-permissions']);
    expect(findings[0]!.fix).toBe(`chmod 700 ${data}`);
    expect(findings[1]!.message).toContain('mode 0644');
    chmodSync(data, 0o700);
    chmodSync(key, 0o600);
    expect(audit(dir, { STEWARD_API_TOKEN: STRONG })).toEqual([]);
  });

  it('flags secrets written into steward.yaml, naming the keys but never the values', () => {
    const dir = home(
      [
        `api_token: ${STRONG}`,
        'database_url: postgres://steward:hunter2-pw@db.internal:5432/steward?sslmode=require',
        'mcp_servers:',
        '  - { name: wiki, url: "https://wiki.example/mcp", headers: { Authorization: "Bearer wiki-literal-token" } }',
        '  - { name: shares, command: shares-mcp, env: { FILES_TOKEN: "$' +
          '{FILES_TOKEN}", FILES_ROOT: /srv } }',
      ].join('\n'),
    );
    const findings = audit(dir, { FILES_TOKEN: 'from-the-environment' });
    expect(ids(findings)).toEqual(['high secret-in-config-file']);
    expect(findings[0]!.message).toContain(
      'holds secret values at api_token, database_url (its password), mcp_servers.0.headers.Authorization',
    );
    expect(findings[0]!.message).not.toContain('FILES_TOKEN');
    expect(findings[0]!.fix).toContain('STEWARD_API_TOKEN, DATABASE_URL');
    for (const secret of [STRONG, 'hunter2-pw', 'wiki-literal-token'])
      expect(JSON.stringify(findings)).not.toContain(secret);
  });

  it('flags a disabled sentinel, an SSRF allow-list that opens everything, a plain-http MCP server', () => {
    const dir = home(
      [
        'sentinel: { enabled: false }',
        'security: { ssrf_allow: ["0.0.0.0/0"] }',
        'mcp_servers:',
        '  - { name: wiki, url: "http://wiki.example/mcp" }',
      ].join('\n'),
    );
    expect(ids(audit(dir, { STEWARD_API_TOKEN: STRONG }))).toEqual([
      'high ssrf-allow-everything',
      'medium mcp-server-plain-http',
      'medium sentinel-disabled',
    ]);
    expect(
      ids(audit(home('security: { ssrf_allow: ["169.254.0.0/16"] }'), { STEWARD_API_TOKEN: STRONG })),
    ).toEqual(['high ssrf-allow-metadata']);
  });

  it('checks installed dependencies against the bundled advisory list, offline', () => {
    const dir = home();
    writeFileSync(
      path.join(dir, 'package-lock.json'),
      JSON.stringify({
        packages: {
          '': {},
          'node_modules/cross-spawn': { version: '7.0.3' },
          'node_modules/foo/node_modules/semver': { version: '7.5.4' },
          'node_modules/semver': { version: '7.6.0' },
        },
      }),
    );
    const findings = audit(dir, { STEWARD_API_TOKEN: STRONG });
    expect(findings).toEqual([
      {
        id: 'dependency-advisory',
        severity: 'high',
        message:
          'cross-spawn 7.0.3 is affected by GHSA-3xgq-45jj-v275: Regular expression denial of service.',
        fix: 'Upgrade cross-spawn to 7.0.5 or later (npm update / a newer Steward release), then run npm ci.',
      },
    ]);
    const bare = mkdtempSync(path.join(os.tmpdir(), 'steward-audit-bare-'));
    expect(
      ids(
        auditConfiguration(loadConfig({ env: { STEWARD_API_TOKEN: STRONG }, cwd: bare }), {
          installDir: bare,
        }),
      ),
    ).toEqual(['low dependency-inventory-missing']);
  });

  it('finds nothing in the dependencies Steward ships with', () => {
    const config = loadConfig({ env: { STEWARD_API_TOKEN: STRONG }, cwd: home() });
    expect(auditConfiguration(config).filter((finding) => finding.id.startsWith('dependency'))).toEqual([]);
  });
});

describe('version ranges', () => {
  it.each([
    ['7.0.4', '<6.0.6 || >=7.0.0 <7.0.5', true],
    ['7.0.5', '<6.0.6 || >=7.0.0 <7.0.5', false],
    ['6.0.5', '<6.0.6 || >=7.0.0 <7.0.5', true],
    ['5.0.0-alpha.1', '>=5.0.0-alpha.1 <5.0.0', true],
    ['5.0.0', '>=5.0.0-alpha.1 <5.0.0', false],
    ['2.0.1', '<=2.0.1', true],
    ['not-a-version', '<9.0.0', false],
  ])('%s in %s is %s', (version, range, expected) => {
    expect(satisfies(version, range)).toBe(expected);
  });
});
