import { chmodSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, runCli } from './support/cli.ts';
import {
  FAKE_MATRIX_BOT,
  FAKE_MATRIX_TOKEN,
  type FakeMatrix,
  startFakeMatrix,
} from './support/fake-matrix.ts';
import { type FakeSlack, startFakeSlack } from './support/fake-slack.ts';
import { FAKE_BOT_TOKEN, type FakeTelegram, startFakeTelegram } from './support/fake-telegram.ts';

/*
 * `steward doctor` makes one harmless call per enabled channel (real child process, fake
 * platforms on loopback): a channel whose API does not answer FAILs, named, with the cause.
 */

let telegram: FakeTelegram;
let slack: FakeSlack;
let matrix: FakeMatrix;
beforeAll(async () => {
  [telegram, slack, matrix] = await Promise.all([startFakeTelegram(), startFakeSlack(), startFakeMatrix()]);
});
afterAll(async () => {
  await Promise.all([telegram.close(), slack.close(), matrix.close()]);
});

function workDir(dotEnv: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'steward-doctor-'));
  writeFileSync(path.join(dir, '.env'), dotEnv);
  chmodSync(path.join(dir, '.env'), 0o644);
  return dir;
}

describe('steward doctor probes', () => {
  it('exits 1 and names a channel whose API does not answer, with the cause; lists only the variables set', async () => {
    const closed = await freePort();
    const dir = workDir('STEWARD_API_TOKEN=dotenv-owner-token-0123456789\n');
    const result = await runCli(['doctor'], {
      cwd: dir,
      env: {
        STEWARD_CONFIG: '/dev/null',
        STEWARD_DATA_DIR: path.join(dir, 'data'),
        TELEGRAM_BOT_TOKEN: FAKE_BOT_TOKEN,
        TELEGRAM_API_ROOT: `http://127.0.0.1:${closed}`,
        SLACK_BOT_TOKEN: 'xoxb-wrong-token-0000',
        SLACK_SIGNING_SECRET: 'slack-signing-secret-0123456789',
        SLACK_API_URL: slack.apiUrl,
        MATRIX_HOMESERVER_URL: matrix.url,
        MATRIX_ACCESS_TOKEN: FAKE_MATRIX_TOKEN,
        MATRIX_USER_ID: FAKE_MATRIX_BOT,
      },
      timeoutMs: 170_000,
    });
    expect(result.code, result.stdout + result.stderr).toBe(1);
    expect(result.stdout).toContain(
      `FAIL channel telegram: on, long polling: the Telegram Bot API at http://127.0.0.1:${closed} does not answer`,
    );
    expect(result.stdout).toContain(`ECONNREFUSED 127.0.0.1:${closed}`);
    expect(result.stdout).toContain('FAIL channel slack: on, webhook');
    expect(result.stdout).toContain('Slack refused auth.test: invalid_auth');
    expect(result.stdout).toContain('fix: set SLACK_BOT_TOKEN to the Bot User OAuth Token');
    expect(result.stdout).toContain(
      `ok   channel matrix: on, long polling: ${FAKE_MATRIX_BOT} answers whoami`,
    );
    expect(result.stdout).toMatch(/check\(s\) failed: .*channel telegram, channel slack/);
    // Only what is set, from the environment or .env.
    const listed = /environment variables set: (.*)/.exec(result.stdout)?.[1] ?? '';
    expect(listed.split(', ')).toEqual(
      expect.arrayContaining(['STEWARD_DATA_DIR', 'TELEGRAM_BOT_TOKEN', 'STEWARD_API_TOKEN']),
    );
    expect(listed).not.toContain('DISCORD_BOT_TOKEN');
    expect(listed).not.toContain('OPENROUTER_API_KEY');
    for (const secret of [FAKE_BOT_TOKEN, 'xoxb-wrong-token-0000', FAKE_MATRIX_TOKEN, 'dotenv-owner-token'])
      expect(result.stdout + result.stderr).not.toContain(secret);
    // Without --fix nothing was changed.
    expect(statSync(path.join(dir, '.env')).mode & 0o777).toBe(0o644);
  }, 180_000);

  it('--fix tightens .env, makes missing folders and registers the stale Telegram webhook', async () => {
    const dir = workDir('STEWARD_API_TOKEN=dotenv-owner-token-0123456789\n');
    const publicUrl = 'http://127.0.0.1:9/';
    const result = await runCli(['doctor', '--fix'], {
      cwd: dir,
      env: {
        STEWARD_CONFIG: '/dev/null',
        STEWARD_DATA_DIR: path.join(dir, 'data'),
        TELEGRAM_BOT_TOKEN: FAKE_BOT_TOKEN,
        TELEGRAM_WEBHOOK_SECRET: 'chosen-webhook-secret-0123',
        TELEGRAM_API_ROOT: telegram.url,
        STEWARD_PUBLIC_URL: publicUrl,
      },
      timeoutMs: 170_000,
    });
    expect(result.stdout).toContain(`chmod 600 ${path.join(dir, '.env')}`);
    expect(result.stdout).toContain(`made the folder ${path.join(dir, 'data')}`);
    expect(statSync(path.join(dir, '.env')).mode & 0o777).toBe(0o600);
    expect(telegram.webhooks.at(-1)).toEqual({
      url: 'http://127.0.0.1:9/webhooks/telegram',
      secret_token: 'chosen-webhook-secret-0123',
    });
    expect(result.stdout).toContain(
      'ok   channel telegram: on, webhook http://127.0.0.1:9/webhooks/telegram (Steward registers it with Telegram when it starts): fixed: registered http://127.0.0.1:9/webhooks/telegram with Telegram; @steward_test_bot answers getMe',
    );
    // The LLM is not configured: doctor still fails on that, and only on that.
    expect(result.stdout).toMatch(/1 check\(s\) failed: llm;/);
    expect(result.code).toBe(1);
  }, 180_000);
});
