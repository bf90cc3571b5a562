import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.ts';
import { openDatabase } from '../src/db/index.ts';
import { userVaultDir, VaultFs } from '../src/files/index.ts';
import { type CliResult, freePort, runCli, startServer } from './support/cli.ts';
import { cliRuntime, runInProcess } from './support/steward.ts';

function stewardHome() {
  const home = mkdtempSync(path.join(os.tmpdir(), 'steward-files-start-'));
  const dataDir = path.join(home, 'data');
  writeFileSync(path.join(home, 'steward.yaml'), '');
  const env = { STEWARD_DATA_DIR: dataDir, STEWARD_CONFIG: path.join(home, 'steward.yaml') };
  return { home, dataDir, env, run: (command: string) => runHere(env, home, command) };
}

/**
 * `steward run COMMAND` on the data dir in this process, on a runtime of its own as its process
 * builds one (test/cli-run.test.ts covers `steward run`'s own process).
 */
async function runHere(env: Record<string, string>, cwd: string, command: string): Promise<CliResult> {
  const runtime = await cliRuntime(env, cwd);
  try {
    return await runInProcess(runtime, command);
  } finally {
    await runtime.close();
  }
}

const output = (result: CliResult) => `exit ${result.code}\n${result.stdout}\n${result.stderr}`;

async function apiRun(url: string, command: string) {
  const response = await fetch(`${url}/api/run`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ command }),
  });
  return (await response.json()) as { status: string; content: string };
}

it('a file under a path whose earlier file was archived is written twice, and the server still starts', async () => {
  const steward = stewardHome();
  for (const command of [
    'files.write --path col --content one',
    'files.delete --path col',
    'files.write --path col/v1 --content two',
    'files.write --path col/v1 --content two',
  ]) {
    const result = await steward.run(command);
    expect(result.code, `${command}\n${output(result)}`).toBe(0);
  }
  const server = await startServer({
    env: { ...steward.env, PORT: String(await freePort()) },
    cwd: steward.home,
  });
  try {
    expect((await apiRun(server.url, 'files.versions --path col/v1')).content).toMatch(
      /has 2 versions[\s\S]*v2 · .* · current/,
    );
    expect((await apiRun(server.url, 'files.read --path col --version 1')).content).toContain('one');
  } finally {
    await server.stop();
  }
}, 180_000);

it('an operation recovery cannot settle is set aside: the server starts, says so, and doctor reports it', async () => {
  const steward = stewardHome();
  const written = await steward.run('files.write --path a.md --content kept');
  expect(written.code, output(written)).toBe(0);
  // A pending delete of a.md whose archive folder is blocked by a file: it can be neither finished nor undone.
  const vault = new VaultFs(userVaultDir(path.join(steward.dataDir, 'files'), 'local'));
  mkdirSync(path.dirname(vault.archiveDir('a.md')), { recursive: true });
  writeFileSync(vault.archiveDir('a.md'), 'in the way');
  const config = loadConfig({ env: steward.env, cwd: steward.home });
  const { database, lock } = await openDatabase(config);
  await database.query(
    `INSERT INTO file_operations (id, user_id, store, operation, path, archive_name) VALUES ('poisoned-op', 'local', 'local', 'delete', 'a.md', 'v1.md')`,
  );
  await database.close();
  lock?.release();
  // Links that would make a walk endless (up) or the whole home folder (home).
  mkdirSync(path.join(vault.root, 'notes/deep'), { recursive: true });
  writeFileSync(path.join(vault.root, 'notes/deep/tern.md'), 'Tern colony census');
  symlinkSync('..', path.join(vault.root, 'notes/deep/up'));
  symlinkSync(steward.home, path.join(vault.root, 'home'));

  const server = await startServer({
    env: { ...steward.env, PORT: String(await freePort()), LOG_LEVEL: 'info' },
    cwd: steward.home,
  });
  try {
    expect(server.output()).toMatch(/set aside/);
    expect((await apiRun(server.url, 'files.read --path a.md')).content).toContain('kept');
    expect((await apiRun(server.url, 'files.write --path b.md --content fine')).status).toBe('ok');
    const doctor = await runCli(['doctor'], { env: steward.env, cwd: steward.home, timeoutMs: 120_000 });
    expect(doctor.stdout).toMatch(/FAIL files: 1 file operation\(s\) set aside.*delete of "a\.md" for local/);
    expect(doctor.stdout).toContain(path.join(steward.dataDir, 'files', '.quarantine'));
  } finally {
    await server.stop();
  }
}, 240_000);
