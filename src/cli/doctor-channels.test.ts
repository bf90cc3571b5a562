import { expect, it } from 'vitest';
import { loadConfig } from '../config/index.ts';
import { channelChecks } from './doctor-channels.ts';

const checksFor = async (env: Record<string, string>) =>
  Object.fromEntries(
    (await channelChecks(loadConfig({ env, cwd: '/nonexistent' }))).map((check) => [check.name, check]),
  );

it('says each channel is off with what to set, and names the missing partner of a half-configured one', async () => {
  const checks = await checksFor({
    SLACK_BOT_TOKEN: 'xoxb-only-a-token',
    WHATSAPP_APP_SECRET: 'only-the-secret',
  });
  expect(checks['channel telegram']).toMatchObject({
    ok: true,
    detail: expect.stringContaining('set TELEGRAM_BOT_TOKEN'),
  });
  expect(checks['channel slack']).toMatchObject({
    ok: false,
    detail: expect.stringContaining('without SLACK_SIGNING_SECRET'),
  });
  expect(checks['channel whatsapp']!.detail).toContain(
    'WHATSAPP_ACCESS_TOKEN, WHATSAPP_VERIFY_TOKEN, WHATSAPP_PHONE_NUMBER_ID',
  );
  expect(JSON.stringify(checks)).not.toContain('xoxb-only-a-token');
});

it('shows the mode and the webhook URL to register', async () => {
  const polling = await checksFor({ TELEGRAM_BOT_TOKEN: '123:abc', TELEGRAM_WEBHOOK_SECRET: 'secret' });
  expect(polling['channel telegram']).toMatchObject({
    ok: false,
    detail: expect.stringContaining('long polling'),
  });
  expect(polling['channel telegram']!.detail).toContain('STEWARD_PUBLIC_URL');
  const webhook = await checksFor({
    TELEGRAM_BOT_TOKEN: '123:abc',
    TELEGRAM_WEBHOOK_SECRET: 'secret',
    STEWARD_PUBLIC_URL: 'http://127.0.0.1:8080/',
    GOOGLE_CHAT_PROJECT_NUMBER: '1234',
  });
  expect(webhook['channel telegram']).toMatchObject({
    ok: true,
    detail:
      'on, webhook http://127.0.0.1:8080/webhooks/telegram (Steward registers it with Telegram when it starts)',
  });
  expect(webhook['channel googlechat']).toMatchObject({
    ok: false,
    detail: expect.stringContaining('GOOGLE_CHAT_SERVICE_ACCOUNT'),
  });
});

it('rejects malformed channel settings at load, naming the variable', () => {
  expect(() => loadConfig({ env: { STEWARD_ALLOW: 'telegram:1, nonsense' }, cwd: '/nonexistent' })).toThrow(
    /STEWARD_ALLOW/,
  );
  expect(() => loadConfig({ env: { TELEGRAM_WEBHOOK_SECRET: 'has spaces' }, cwd: '/nonexistent' })).toThrow(
    /TELEGRAM_WEBHOOK_SECRET/,
  );
  expect(
    loadConfig({ env: { STEWARD_ALLOW: 'telegram:1,slack:U2=local' }, cwd: '/nonexistent' }).channels.allow,
  ).toEqual(['telegram:1', 'slack:U2=local']);
});

it('lists Discord and Matrix: on without a public URL, a half-configured Matrix named, bad ids refused', async () => {
  const on = await checksFor({
    DISCORD_BOT_TOKEN: 'MTE4.discord-token',
    MATRIX_HOMESERVER_URL: 'https://matrix.example.org',
    MATRIX_ACCESS_TOKEN: 'syt_secret_token',
    MATRIX_USER_ID: '@steward:example.org',
    STEWARD_PUBLIC_URL: 'http://127.0.0.1:8080/',
  });
  expect(on['channel discord']).toMatchObject({
    ok: true,
    detail: expect.stringContaining('no public URL needed'),
  });
  expect(on['channel matrix']).toMatchObject({ ok: true, detail: 'on, long polling' });
  expect(JSON.stringify(on)).not.toContain('syt_secret_token');
  const half = await checksFor({ MATRIX_HOMESERVER_URL: 'https://matrix.example.org' });
  expect(half['channel matrix']).toMatchObject({
    ok: false,
    detail: expect.stringContaining('set MATRIX_ACCESS_TOKEN, MATRIX_USER_ID'),
  });
  expect(() => loadConfig({ env: { MATRIX_USER_ID: 'steward' }, cwd: '/nonexistent' })).toThrow(
    /MATRIX_USER_ID/,
  );
  expect(() => loadConfig({ env: { DISCORD_GATEWAY_URL: 'http://x' }, cwd: '/nonexistent' })).toThrow(
    /DISCORD_GATEWAY_URL/,
  );
  expect(
    loadConfig({
      env: { STEWARD_ALLOW: 'discord:80351110224678912,matrix:@alice:example.org=local' },
      cwd: '/nonexistent',
    }).channels.allow,
  ).toEqual(['discord:80351110224678912', 'matrix:@alice:example.org=local']);
});

it('lists Signal and email: on with long polling, half-configured ones named, the proxy password hidden', async () => {
  const on = await checksFor({
    SIGNAL_CLI_URL: 'http://steward:proxy-pass-0123@127.0.0.1:8080',
    SIGNAL_NUMBER: '+4915112345678',
    EMAIL_CHANNEL: 'on',
    EMAIL_IMAP_URL: 'imaps://steward%40example.com:imap-pass-0123@mail.example.com',
    EMAIL_SMTP_URL: 'smtps://steward%40example.com:smtp-pass-0123@mail.example.com',
    EMAIL_FROM: 'Steward <steward@example.com>',
  });
  expect(on['channel signal']).toMatchObject({ ok: true, detail: 'on, long polling' });
  expect(on['channel email']).toMatchObject({ ok: true, detail: 'on, long polling' });
  expect(JSON.stringify(on)).not.toMatch(/proxy-pass|imap-pass|smtp-pass/);
  const half = await checksFor({ SIGNAL_NUMBER: '+4915112345678', EMAIL_CHANNEL: 'on' });
  expect(half['channel signal']).toMatchObject({
    ok: false,
    detail: expect.stringContaining('without SIGNAL_CLI_URL'),
  });
  expect(half['channel email']).toMatchObject({
    ok: false,
    detail: expect.stringContaining('EMAIL_IMAP_URL, EMAIL_SMTP_URL, EMAIL_FROM'),
  });
  expect(() => loadConfig({ env: { SIGNAL_NUMBER: '015112345678' }, cwd: '/nonexistent' })).toThrow(
    /SIGNAL_NUMBER/,
  );
  expect(() => loadConfig({ env: { EMAIL_CHANNEL: 'yes' }, cwd: '/nonexistent' })).toThrow(/EMAIL_CHANNEL/);
  expect(
    loadConfig({
      env: { STEWARD_ALLOW: 'signal:+4915112345678,email:ana@example.org=local' },
      cwd: '/nonexistent',
    }).channels.allow,
  ).toEqual(['signal:+4915112345678', 'email:ana@example.org=local']);
});
