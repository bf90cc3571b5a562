import { expect, it } from 'vitest';
import { loadConfig } from '../config/index.ts';
import { channelChecks } from './doctor.ts';

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
    detail: 'on, webhook http://127.0.0.1:8080/webhooks/telegram (register it with the platform)',
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
