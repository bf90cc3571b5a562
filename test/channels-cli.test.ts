import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pairingCodeFor } from '../src/channels/pairing.ts';
import { openDatabase } from '../src/db/index.ts';
import { listIdentities } from '../src/users/index.ts';
import { cliConfig, freePort, runCli, startServer } from './support/cli.ts';
import { FAKE_BOT_TOKEN, type FakeTelegram, startFakeTelegram } from './support/fake-telegram.ts';

describe('steward channels, pairing and users link', { timeout: 120_000 }, () => {
  let telegram: FakeTelegram;
  let env: Record<string, string>;
  let dataDir: string;
  beforeAll(async () => {
    telegram = await startFakeTelegram();
    ({ env, dataDir } = cliConfig(
      'steward-channels-cli-',
      `channels:\n  telegram: { bot_token: "${FAKE_BOT_TOKEN}", api_root: "${telegram.url}" }\n  slack: { bot_token: "xoxb-only-a-token" }\n`,
    ));
  });
  afterAll(async () => {
    await telegram?.close();
  });

  it('lists each channel with its state and what to set', async () => {
    const channels = await runCli(['channels'], { env });
    expect(channels.code).toBe(0);
    expect(channels.stdout).toMatch(/^telegram\s+on \(polling\)/m);
    expect(channels.stdout).toMatch(/^slack\s+off/m);
    expect(channels.stdout).toContain('SLACK_BOT_TOKEN is set without SLACK_SIGNING_SECRET');
    expect(channels.stdout).toMatch(/^whatsapp\s+off — to use it, set WHATSAPP_ACCESS_TOKEN/m);
    expect(channels.stdout).not.toContain(FAKE_BOT_TOKEN);
  });

  it('lists and approves a pairing code, greeting the sender, and links identities', async () => {
    const { database, lock } = await openDatabase({ dataDir, database_url: undefined });
    const { request } = await pairingCodeFor(
      database,
      { channel: 'telegram', senderId: '4242', senderName: 'Grace', chatId: '4242', meta: {} },
      new Date(),
    );
    await database.close();
    lock?.release();

    const listed = await runCli(['pairing', 'list'], { env });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`${request.code}\\s+telegram\\s+4242\\s+Grace`));
    const approved = await runCli(['pairing', 'approve', request.code], { env });
    expect(approved.stderr).toBe('');
    expect(approved.code).toBe(0);
    expect(approved.stdout).toContain('is now the user telegram:4242');
    expect(telegram.sent).toEqual([
      expect.objectContaining({ chat_id: '4242', text: expect.stringContaining('approved') }),
    ]);
    const bad = await runCli(['users', 'link', 'nonsense', 'local'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('CHANNEL:SENDER');
  });

  it('goes through the running server when one owns the data dir', async () => {
    const server = await startServer({ env: { ...env, PORT: String(await freePort()) } });
    try {
      const linked = await runCli(['users', 'link', 'googlechat:users/123', 'local'], { env });
      expect(linked.stderr).toBe('');
      expect(linked.code).toBe(0);
      const again = await runCli(['pairing', 'approve', 'ABCD2345'], { env });
      expect(again.code).toBe(1);
      expect(again.stderr).toContain('No pairing code ABCD2345');
      const json = await runCli(['channels', '--json'], { env });
      const statuses = JSON.parse(json.stdout) as Array<{ channel: string; configured: boolean }>;
      expect(statuses.find((status) => status.channel === 'telegram')?.configured).toBe(true);
    } finally {
      await server.stop();
    }
    const { database, lock } = await openDatabase({ dataDir, database_url: undefined });
    const identities = await listIdentities(database, 'local');
    await database.close();
    lock?.release();
    expect(identities.map((identity) => `${identity.channel}:${identity.externalId}`)).toEqual([
      'googlechat:users/123',
    ]);
  });
});
