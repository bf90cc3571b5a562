import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { loadConfig } from '../src/config/index.ts';
import { runCli } from './support/cli.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { FAKE_BOT_TOKEN, type FakeTelegram, startFakeTelegram } from './support/fake-telegram.ts';

/* `steward onboard` in a real child process against the fake LLM and the fake Bot API. */

let llm: FakeLlm;
let telegram: FakeTelegram;
beforeAll(async () => {
  [llm, telegram] = await Promise.all([
    startFakeLlm({ apiKey: 'sk-onboard-key-0123456789' }),
    startFakeTelegram(),
  ]);
});
afterAll(async () => {
  await Promise.all([llm.close(), telegram.close()]);
});

const KEY = 'sk-onboard-key-0123456789';
const workDir = () => mkdtempSync(path.join(os.tmpdir(), 'steward-onboard-'));
const oneToken = (model: string) =>
  llm.enqueue({
    text: 'OK',
    expect: (request) => expect(request.body).toMatchObject({ model, max_tokens: 1 }),
  });
/** `steward onboard --non-interactive` against the fake LLM with `key` and `model`, then `flags`. */
const onboard = (key: string, model: string, flags: string[], options: Parameters<typeof runCli>[1]) =>
  runCli(
    [
      'onboard',
      '--non-interactive',
      '--llm-base-url',
      llm.url,
      '--llm-api-key',
      key,
      '--llm-model',
      model,
      ...flags,
    ],
    options,
  );
const readEnv = (dir: string) =>
  parseEnv(readFileSync(path.join(dir, '.env'), 'utf8')) as Record<string, string>;

describe('steward onboard --non-interactive', () => {
  it('proves the LLM with a one-token call and the bot token with getMe, then writes .env (0600) and steward.yaml', async () => {
    const dir = workDir();
    oneToken('onboard-model');
    const gets = telegram.requests.length;
    const result = await onboard(KEY, 'onboard-model', ['--telegram-bot-token', FAKE_BOT_TOKEN], {
      cwd: dir,
      env: { TELEGRAM_API_ROOT: telegram.url },
    });
    llm.assertDone();
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(telegram.requests.slice(gets).map((request) => request.path)).toEqual([
      `/bot${FAKE_BOT_TOKEN}/getMe`,
    ]);
    expect(statSync(path.join(dir, '.env')).mode & 0o777).toBe(0o600);
    const env = readEnv(dir);
    expect(env).toMatchObject({ LLM_API_KEY: KEY, TELEGRAM_BOT_TOKEN: FAKE_BOT_TOKEN });
    expect(env.STEWARD_API_TOKEN).toMatch(/^[\w-]{32}$/);
    expect(env.TELEGRAM_WEBHOOK_SECRET).toBeUndefined(); // polling: no public URL given
    const yaml = parseYaml(readFileSync(path.join(dir, 'steward.yaml'), 'utf8'));
    expect(yaml.llm.base_url).toBe(llm.url);
    expect(yaml.llm.roles.orchestrator.model).toBe('onboard-model');
    // What was written is what Steward then runs with.
    const config = loadConfig({ env, cwd: dir });
    expect(config.endpoint).toMatchObject({ baseUrl: llm.url, apiKey: KEY });
    expect(config.roster.roles.orchestrator?.model).toBe('onboard-model');
    expect(config.channels.telegram.bot_token).toBe(FAKE_BOT_TOKEN);
    // Secrets are never printed.
    for (const secret of [KEY, FAKE_BOT_TOKEN, env.STEWARD_API_TOKEN!])
      expect(result.stdout + result.stderr).not.toContain(secret);
    expect(result.stdout).toContain('npx steward start');
  }, 60_000);

  it('exits non-zero with a clear error and writes nothing when the LLM or the bot token is refused', async () => {
    const dir = workDir();
    const refused = await onboard('sk-wrong-key-000000', 'm', [], { cwd: dir });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('answered HTTP 401');
    expect(refused.stdout).toContain('fix: the API key was refused');
    expect(refused.stderr).toContain(
      'the LLM endpoint did not answer a one-token chat completion; nothing was written',
    );
    expect(refused.stdout + refused.stderr).not.toContain('sk-wrong-key-000000');

    oneToken('m');
    const badBot = await onboard(KEY, 'm', ['--telegram-bot-token', '123:not-the-token'], {
      cwd: dir,
      env: { TELEGRAM_API_ROOT: telegram.url },
    });
    llm.assertDone();
    expect(badBot.code).toBe(1);
    expect(badBot.stdout).toContain('Telegram refused getMe: 401');
    expect(badBot.stderr).toContain('Telegram did not accept the credentials; nothing was written');
    expect(existsSync(path.join(dir, '.env'))).toBe(false);
    expect(existsSync(path.join(dir, 'steward.yaml'))).toBe(false);

    const brokenYaml = workDir();
    writeFileSync(path.join(brokenYaml, 'steward.yaml'), 'llm: [unclosed\n');
    oneToken('m');
    const broken = await onboard(KEY, 'm', [], { cwd: brokenYaml });
    llm.assertDone();
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain('steward.yaml is not valid YAML');
    expect(readFileSync(path.join(brokenYaml, 'steward.yaml'), 'utf8')).toBe('llm: [unclosed\n');
    expect(existsSync(path.join(brokenYaml, '.env'))).toBe(false);

    const noModel = await runCli(['onboard', '--non-interactive', '--llm-base-url', llm.url], { cwd: dir });
    expect(noModel.code).toBe(2);
    expect(noModel.stderr).toContain('--non-interactive needs --llm-model');
  }, 60_000);
});

describe('steward onboard, interactive', () => {
  it('asks each question, retries a refused model, keeps the rest of .env, and writes a systemd user unit', async () => {
    const dir = workDir();
    const home = workDir();
    writeFileSync(path.join(dir, '.env'), 'OPENROUTER_API_KEY=sk-or-old-key-0000\nMY_OWN_SETTING=kept\n', {
      mode: 0o644,
    });
    llm.enqueue({ status: 404, message: 'model not found' });
    oneToken('good-model');
    const answers = [
      llm.url, // endpoint
      KEY,
      'no-such-model',
      // refused: asked again
      llm.url,
      KEY,
      'good-model',
      '', // owner token: make one
      'y', // Telegram
      FAKE_BOT_TOKEN,
      'polling',
      'n', // Slack
      'n', // WhatsApp
      'n', // Google Chat
      'n', // Discord
      'n', // Matrix
      'systemd',
    ];
    const result = await runCli(['onboard'], {
      cwd: dir,
      env: { TELEGRAM_API_ROOT: telegram.url, HOME: home },
      input: `${answers.join('\n')}\n`,
    });
    llm.assertDone();
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain('answered HTTP 404: model not found');
    expect(result.stdout).toContain('Let us try again.');
    expect(result.stdout).toContain('✓ Telegram accepted the credentials');
    const text = readFileSync(path.join(dir, '.env'), 'utf8');
    expect(text).toContain('MY_OWN_SETTING=kept');
    // The old OpenRouter key would override the endpoint chosen now: commented out, not lost.
    expect(text).toContain(
      '# OPENROUTER_API_KEY=sk-or-old-key-0000  # set in steward.yaml by steward onboard',
    );
    expect(statSync(path.join(dir, '.env')).mode & 0o777).toBe(0o600);
    expect(readEnv(dir)).toMatchObject({ LLM_API_KEY: KEY, TELEGRAM_BOT_TOKEN: FAKE_BOT_TOKEN });
    const unit = readFileSync(path.join(home, '.config', 'systemd', 'user', 'steward.service'), 'utf8');
    expect(unit).toContain(`WorkingDirectory=${dir}`);
    expect(unit).toMatch(/ExecStart=\S+ .*bin\/steward\.js start/);
    expect(result.stdout).toContain('systemctl --user enable --now steward');
    expect(result.stdout + result.stderr).not.toContain(KEY);
  }, 60_000);
});

describe('.env.example', () => {
  it('names every variable the configuration reads, commented, with no value', async () => {
    const { ENV_VARS } = await import('../src/config/index.ts');
    const text = readFileSync(new URL('../.env.example', import.meta.url), 'utf8');
    const named = [...text.matchAll(/^# ([A-Z][A-Z0-9_]*)=(.*)$/gm)];
    expect(named.map((match) => match[1])).toEqual(
      expect.arrayContaining(ENV_VARS.map((variable) => variable.name)),
    );
    expect(named.filter((match) => match[2] !== '')).toEqual([]);
    expect(text.split('\n').filter((line) => line && !line.startsWith('#'))).toEqual([]);
  });
});
