import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config/index.ts';
import { withLogContext } from './log-context.ts';
import { createLogger } from './logger.ts';
import { logFilePath } from './rotating-file.ts';

/*
 * Invariant 5 for logs: every configured secret, fed through every way a line can be logged,
 * reaches neither stderr nor the log file.
 */

const SECRETS = {
  OPENROUTER_API_KEY: 'sk-or-v1-0123456789abcdef0123',
  STEWARD_SECRET_KEY: 'secret-key-0123456789abcdef',
  STEWARD_API_TOKEN: 'api-token-0123456789abcdef',
  STEWARD_METRICS_TOKEN: 'metrics-token-0123456789abcdef',
  DATABASE_URL: 'postgres://steward:db-password-0123456789@127.0.0.1:5432/steward',
  STEWARD_ALERT_WEBHOOK_URL:
    'https://chat.googleapis.com/v1/spaces/AAAA/messages?key=webhook-key-0123456789&token=webhook-token-0123456789',
  OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Basic%20otlp-credential-0123456789',
};

/** The literal values a leak would show. */
const LEAKS = [
  'sk-or-v1-0123456789abcdef0123',
  'secret-key-0123456789abcdef',
  'api-token-0123456789abcdef',
  'metrics-token-0123456789abcdef',
  'db-password-0123456789',
  'webhook-key-0123456789',
  'webhook-token-0123456789',
  'otlp-credential-0123456789',
];

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, destination };
}

describe('log redaction', () => {
  it('never writes a configured secret to stderr or the log file, whatever the log path', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'steward-redact-'));
    const config = loadConfig({ env: { ...SECRETS, STEWARD_DATA_DIR: dir }, cwd: dir });
    for (const leak of LEAKS) expect(config.secrets.some((secret) => secret.includes(leak))).toBe(true);
    const { lines, destination } = capture();
    const file = logFilePath(config.dataDir);
    const logger = createLogger({
      level: 'trace',
      secrets: () => config.secrets,
      destination,
      file: { file, maxBytes: 1_000_000, maxFiles: 2 },
    });
    const secrets = [...config.secrets, ...LEAKS];
    let written = 0;
    for (const secret of secrets) {
      logger.info(`a message with ${secret} inside`);
      logger.warn('printf style %s and %o', secret, { value: secret });
      logger.info({ note: `value ${secret}` }, 'in a field');
      logger.debug(
        { request: { headers: { 'x-custom': secret }, url: `https://x.example/?q=${secret}` } },
        'nested',
      );
      logger.error(
        { err: new Error(`failed with ${secret}`, { cause: new Error(`cause ${secret}`) }) },
        'an error',
      );
      logger.error(new Error(`a bare error ${secret}`));
      logger.info({ list: [secret, { deep: [secret] }] }, 'in arrays');
      logger.child({ binding: secret }).info('from a child logger');
      logger
        .child({ skill: 'x.y' })
        .child({ nested: `n ${secret}` })
        .warn({ more: secret }, 'grandchild');
      withLogContext({ turnId: secret }, () => logger.info('inside a turn context'));
      logger.fatal(
        { apiKey: 'an-unconfigured-key-0123', token: 'an-unconfigured-token-0123' },
        'secret-looking keys',
      );
      written += 11;
    }
    const stderr = lines.join('');
    const stored = readFileSync(file, 'utf8');
    expect(lines).toHaveLength(written);
    expect(stored.split('\n').filter(Boolean)).toHaveLength(written);
    for (const text of [stderr, stored]) {
      for (const leak of [...LEAKS, 'an-unconfigured-key-0123', 'an-unconfigured-token-0123']) {
        expect(text).not.toContain(leak);
      }
      expect(text).toContain('[redacted]');
      expect(text).toContain('from a child logger');
    }
  });
});
