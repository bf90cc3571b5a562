import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FAKE_DISCORD_TOKEN, type FakeDiscord, startFakeDiscord } from '../../test/support/fake-discord.ts';
import {
  FAKE_PROJECT_NUMBER,
  type FakeGoogleChat,
  startFakeGoogleChat,
} from '../../test/support/fake-google-chat.ts';
import {
  FAKE_PHONE_NUMBER_ID,
  FAKE_WHATSAPP_TOKEN,
  type FakeGraph,
  startFakeGraph,
} from '../../test/support/fake-graph.ts';
import { loadConfig } from '../config/index.ts';
import { channelChecks } from './doctor-channels.ts';

let graph: FakeGraph;
let discord: FakeDiscord;
let chat: FakeGoogleChat;
beforeAll(async () => {
  [graph, discord, chat] = await Promise.all([startFakeGraph(), startFakeDiscord(), startFakeGoogleChat()]);
});
afterAll(async () => {
  await Promise.all([graph.close(), discord.close(), chat.close()]);
});

const probe = async (env: Record<string, string>) =>
  Object.fromEntries(
    (
      await channelChecks(loadConfig({ env, cwd: '/nonexistent' }), { probe: true, probeTimeoutMs: 5_000 })
    ).map((check) => [check.name, check]),
  );

const whatsapp = (token: string) => ({
  WHATSAPP_ACCESS_TOKEN: token,
  WHATSAPP_APP_SECRET: 'app-secret-0123456789',
  WHATSAPP_VERIFY_TOKEN: 'verify-token-0123',
  WHATSAPP_PHONE_NUMBER_ID: FAKE_PHONE_NUMBER_ID,
  WHATSAPP_GRAPH_URL: graph.graphUrl,
});

it('looks up the WhatsApp phone number, asks Discord who the bot is, gets Google Chat a token', async () => {
  const keyFile = await chat.writeServiceAccount(
    path.join(mkdtempSync(path.join(os.tmpdir(), 'steward-probe-')), 'chat-key.json'),
  );
  const checks = await probe({
    ...whatsapp(FAKE_WHATSAPP_TOKEN),
    DISCORD_BOT_TOKEN: FAKE_DISCORD_TOKEN,
    DISCORD_API_URL: discord.apiUrl,
    GOOGLE_CHAT_PROJECT_NUMBER: FAKE_PROJECT_NUMBER,
    GOOGLE_CHAT_SERVICE_ACCOUNT: keyFile,
    GOOGLE_CHAT_JWKS_URL: chat.jwksUrl,
    STEWARD_PUBLIC_URL: 'https://steward.example.org',
  });
  expect(checks['channel whatsapp']).toMatchObject({
    ok: true,
    detail: expect.stringContaining('the phone number +1 555-0100 (Steward Test) answers'),
  });
  expect(checks['channel discord']).toMatchObject({
    ok: true,
    detail: expect.stringContaining('the bot steward answers'),
  });
  expect(checks['channel googlechat']).toMatchObject({
    ok: true,
    detail: expect.stringContaining('the service account got an access token'),
  });
  expect(chat.tokensIssued).toBe(1);
});

it('fails a refused token with the setting to fix, and never shows the token', async () => {
  const checks = await probe({
    ...whatsapp('EAAG-revoked-token-0000'),
    DISCORD_BOT_TOKEN: 'MTE4.wrong.discord-token-0000',
    DISCORD_API_URL: discord.apiUrl,
  });
  expect(checks['channel whatsapp']).toMatchObject({
    ok: false,
    detail: expect.stringContaining(
      'the Graph API refused the phone number lookup: Invalid OAuth access token',
    ),
    fix: expect.stringContaining('WHATSAPP_ACCESS_TOKEN'),
  });
  expect(checks['channel discord']).toMatchObject({
    ok: false,
    detail: expect.stringContaining('Discord refused GET /users/@me: 401'),
    fix: expect.stringContaining('DISCORD_BOT_TOKEN'),
  });
  expect(JSON.stringify(checks)).not.toMatch(/EAAG-revoked|wrong\.discord-token/);
});

it('warns when webhooks would go to a plain-http public address', async () => {
  const checks = await probe({
    SLACK_BOT_TOKEN: 'xoxb-0000',
    SLACK_SIGNING_SECRET: 'signing-secret-0123',
    STEWARD_PUBLIC_URL: 'http://steward.example.org',
  });
  expect(checks['channel slack']).toMatchObject({
    ok: true,
    note: true,
    detail: expect.stringContaining('the URL is plain http, which the platform refuses for webhooks'),
    fix: expect.stringContaining('https://'),
  });
});
