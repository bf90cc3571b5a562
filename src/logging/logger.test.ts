import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config/index.ts';
import { createLogger, redact } from './logger.ts';

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

describe('logger redaction', () => {
  it('never writes a configured secret, wherever it appears', () => {
    const config = loadConfig({
      env: { OPENROUTER_API_KEY: 'sk-or-v1-abcdef0123456789', STEWARD_API_TOKEN: 'api-token-0123456789' },
      cwd: process.cwd(),
    });
    const { lines, destination } = capture();
    const logger = createLogger({ secrets: () => config.secrets, destination });
    logger.info(`calling with sk-or-v1-abcdef0123456789 in the message`);
    logger.info({ request: { headers: { authorization: 'Bearer api-token-0123456789' } } }, 'nested header');
    logger.info({ note: 'the token is api-token-0123456789' }, 'in a value');
    logger.error({ err: new Error('401 for key sk-or-v1-abcdef0123456789') }, 'an error message');
    logger.warn({ apiKey: 'some-unconfigured-key-value' }, 'a secret-looking key');
    const text = lines.join('');
    expect(lines).toHaveLength(5);
    expect(text).not.toContain('sk-or-v1-abcdef0123456789');
    expect(text).not.toContain('api-token-0123456789');
    expect(text).not.toContain('some-unconfigured-key-value');
    expect(text).toContain('[redacted]');
    expect(text).toContain('an error message');
  });

  it('masks bearer tokens even when they are not configured', () => {
    expect(redact('Authorization: Bearer abcdefghijklmnop', [])).toBe('Authorization: Bearer [redacted]');
  });

  it('walks nested objects, arrays and error causes', () => {
    const error = new Error('outer', { cause: new Error('inner s3cr3t-value') });
    const out = redact({ list: [{ deep: 's3cr3t-value' }], error }, ['s3cr3t-value']);
    expect(JSON.stringify(out)).not.toContain('s3cr3t-value');
  });
});

describe('human log lines (a terminal)', () => {
  it('shows time, level, message and fields, and the error message, not JSON', async () => {
    const { humanLine } = await import('./human-lines.ts');
    const line = humanLine(
      JSON.stringify({
        level: 40,
        time: Date.UTC(2026, 0, 1, 12, 4, 5),
        msg: 'Steward is listening',
        url: 'http://127.0.0.1:8787',
        vector: true,
        err: { type: 'Error', message: 'port busy', stack: 'at x' },
      }),
    );
    expect(line).toMatch(
      /^\d\d:\d\d:\d\d WARN {2}Steward is listening url=http:\/\/127\.0\.0\.1:8787 vector=true err="port busy"\n$/,
    );
    expect(line).not.toContain('stack');
    expect(humanLine('not json')).toBe('not json\n');
  });
});
