import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pairingCodeFor } from '../src/channels/pairing.ts';
import { openDatabase } from '../src/db/index.ts';
import { ensureUser, findIdentity } from '../src/users/index.ts';
import { cliConfig, MAIN, NODE_FLAGS, runCli } from './support/cli.ts';
import { FAKE_BOT_TOKEN, type FakeTelegram, startFakeTelegram } from './support/fake-telegram.ts';

/** Runs `steward ARGS` on a pseudo-terminal (util-linux `script`), typing `input`: what a person at a shell sees. */
function runOnTerminal(args: string[], env: Record<string, string>, input: string): Promise<string> {
  const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;
  const command = [process.execPath, ...NODE_FLAGS, MAIN, ...args].map(quote).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...env },
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
      if (output.includes('[y/N]') && input) {
        child.stdin.write(input);
        input = '';
      }
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(timer);
      resolve(output.replaceAll('\r', ''));
    });
  });
}

describe('steward pairing approve --as', { timeout: 120_000 }, () => {
  let telegram: FakeTelegram;
  let env: Record<string, string>;
  let dataDir: string;
  const codes: Record<string, string> = {};
  const userOf = async (senderId: string) => {
    const { database, lock } = await openDatabase({ dataDir, database_url: undefined });
    try {
      return (await findIdentity(database, 'telegram', senderId))?.userId ?? null;
    } finally {
      await database.close();
      lock?.release();
    }
  };

  beforeAll(async () => {
    telegram = await startFakeTelegram();
    ({ env, dataDir } = cliConfig(
      'steward-pairing-as-',
      `channels:\n  telegram: { bot_token: "${FAKE_BOT_TOKEN}", api_root: "${telegram.url}" }\n`,
    ));
    const { database, lock } = await openDatabase({ dataDir, database_url: undefined });
    await ensureUser(database, 'alice');
    for (const senderId of ['7001', '7002', '7003']) {
      codes[senderId] = (
        await pairingCodeFor(
          database,
          { channel: 'telegram', senderId, senderName: `Phone ${senderId}`, chatId: senderId, meta: {} },
          new Date(),
        )
      ).request.code;
    }
    await database.close();
    lock?.release();
  });
  afterAll(async () => {
    await telegram?.close();
  });

  it('refuses an unknown user clearly and leaves the code pending', async () => {
    const result = await runCli(['pairing', 'approve', codes['7001']!, '--as', 'nobody'], { env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('No user "nobody": --as takes an existing user (local is the owner)');
    const listed = await runCli(['pairing', 'list'], { env });
    expect(listed.stdout).toContain(codes['7001']);
    expect(listed.stdout).toContain('pairing approve CODE --as USER');
  });

  it('on a terminal, asks whether the first pairing is the owner, and joins it to local when it is', async () => {
    const output = await runOnTerminal(['pairing', 'approve', codes['7001']!], env, 'y\n');
    expect(output).toContain('The owner has no chat identity yet. Is telegram:7001 (Phone 7001) you?');
    expect(output).toContain('telegram:7001 joined the user local and shares its memory, tasks and history');
    expect(await userOf('7001')).toBe('local');
  });

  it('joins a sender to an existing user, and offers --as after a plain approval', async () => {
    const joined = await runCli(['pairing', 'approve', codes['7002']!, '--as', 'alice'], { env });
    expect(joined.code, joined.stderr).toBe(0);
    expect(joined.stdout).toContain('telegram:7002 joined the user alice');
    expect(await userOf('7002')).toBe('alice');
    const plain = await runCli(['pairing', 'approve', codes['7003']!], { env });
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain('telegram:7003 is now the user telegram:7003');
    expect(plain.stdout).toContain('npx steward users link telegram:7003 USER');
    expect(plain.stdout).toContain('npx steward pairing approve CODE --as USER');
  });
});
