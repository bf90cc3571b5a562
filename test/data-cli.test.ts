import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { restoreBackup, stewardVersion } from '../src/backup/index.ts';
import { restoreCommand, usersDeleteCommand } from '../src/cli/data.ts';
import { loadConfig } from '../src/config/index.ts';
import { type CliResult, freePort, ROOT, refusal, runCli, startServer } from './support/cli.ts';
import { cliRuntime, runInProcess } from './support/steward.ts';

const tmp = (prefix: string) => mkdtempSync(path.join(os.tmpdir(), `steward-${prefix}-`));
const env = (dataDir: string) => ({ STEWARD_DATA_DIR: dataDir });
/**
 * `steward run COMMAND --user USER` on `dataDir` in this process, as its process executes it: the
 * commands under test here are backup, restore, export and users delete (test/cli-run.test.ts
 * covers `steward run`'s own process).
 */
async function runHere(dataDir: string, command: string, user = 'local'): Promise<CliResult> {
  const runtime = await cliRuntime(env(dataDir), ROOT);
  try {
    return await runInProcess(runtime, command, user);
  } finally {
    await runtime.close();
  }
}
const oneLine = (text: string) => text.trim().split('\n').length === 1;
const configOf = (dataDir: string) => loadConfig({ env: env(dataDir), cwd: ROOT });

describe('steward backup, restore, export and users delete', () => {
  it('round-trips a data dir, refuses what it must with one line, and exits 0 on success', async () => {
    const source = path.join(tmp('cli-a'), 'data');
    const seeded = await runHere(source, "tasks.create --title 'Renew the passport'");
    expect(seeded.code, seeded.stdout).toBe(0);
    const archive = path.join(tmp('cli-out'), 'b.tar.gz');
    const backup = await runCli(['backup', '--output', archive], { env: env(source) });
    expect(backup.code, backup.stderr).toBe(0);
    expect(backup.stdout).toContain(`Backup written to ${archive}`);
    expect(backup.stdout).toContain('The secret key is not in it');

    const target = path.join(tmp('cli-b'), 'data');
    const restored = await runCli(['restore', archive], { env: env(target) });
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toMatch(/^Restored .*tables, \d+ rows/);
    const search = await runHere(target, 'tasks.search --query passport');
    expect(search.stdout).toContain('Renew the passport');

    const again = await runCli(['restore', archive], { env: env(target) });
    expect(again.code).toBe(1);
    expect(oneLine(again.stderr)).toBe(true);
    expect(again.stderr).toMatch(/^steward restore: .*already hold.*--force/);
    const forced = await runCli(['restore', archive, '--force'], { env: env(target) });
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toContain('What it replaced is kept in');

    const damaged = path.join(path.dirname(archive), 'damaged.tar.gz');
    const bytes = readFileSync(archive);
    bytes[bytes.length - 40]! ^= 0x55;
    writeFileSync(damaged, bytes);
    // The other refusals in this process, through the code each command runs in its process (the
    // `steward restore` process refusing above proves how a process prints a refusal).
    const refused = await refusal(restoreCommand(configOf(path.join(tmp('cli-c'), 'data')), damaged, {}));
    expect(refused.code).toBe(1);
    expect(oneLine(refused.stderr)).toBe(true);
    expect(refused.stderr).toMatch(/^steward restore: .*damaged/);

    const owner = await refusal(usersDeleteCommand(configOf(source), 'local', { yes: true }));
    expect(owner.code).toBe(1);
    expect(owner.stderr.trim()).toBe(
      'steward users delete: local is the owner of this Steward and cannot be deleted',
    );
    const unknown = await refusal(usersDeleteCommand(configOf(source), 'nobody', { yes: true }));
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim()).toBe('steward users delete: there is no user nobody');
    // Its own process: without --yes it asks on a terminal, and this one has none.
    const noTerminal = await runCli(['users', 'delete', 'nobody'], { env: env(source) });
    expect(noTerminal.code).toBe(2);
  }, 180_000);

  it('relays to the server that owns the data dir, without stopping it', async () => {
    const dataDir = path.join(tmp('cli-srv'), 'data');
    const port = await freePort();
    const server = await startServer({ env: { STEWARD_DATA_DIR: dataDir, PORT: String(port) } });
    try {
      // Seeded through the server's API, as a `steward run` process would relay them.
      for (const [user, title] of [
        ['local', 'Water the plants'],
        ['alice', 'Book the dentist'],
      ]) {
        const response = await fetch(`${server.url}/api/run`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ command: `tasks.create --title '${title}'`, user }),
        });
        expect(await response.json()).toMatchObject({ status: 'ok' });
      }
      const archive = path.join(tmp('cli-srv-out'), 'live.tar.gz');
      const backup = await runCli(['backup', '--output', archive], { env: env(dataDir) });
      expect(backup.code, backup.stderr).toBe(0);
      expect(backup.stdout).toContain('through the running server');

      const exported = path.join(tmp('cli-export'), 'alice');
      const exportRun = await runCli(['export', '--user', 'alice', '--output', exported], {
        env: env(dataDir),
      });
      expect(exportRun.code, exportRun.stderr).toBe(0);
      expect(readFileSync(path.join(exported, 'tasks.md'), 'utf8')).toContain('Book the dentist');
      expect(readFileSync(path.join(exported, 'tasks.md'), 'utf8')).not.toContain('Water the plants');

      const deleted = await runCli(['users', 'delete', 'alice', '--yes'], { env: env(dataDir) });
      expect(deleted.code, deleted.stderr).toBe(0);
      expect(deleted.stdout).toMatch(/^Deleted alice: .*tasks 1/);
      const restoreLive = await refusal(restoreCommand(configOf(dataDir), archive, {}));
      expect(restoreLive.code).toBe(1);
      expect(restoreLive.stderr).toMatch(/^steward restore: a Steward server \(process \d+\) is running/);
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);

      // The archive made through the server is whole: restored here, it holds alice's task.
      const target = path.join(tmp('cli-srv-b'), 'data');
      await restoreBackup(archive, {
        dataDir: target,
        skillsDir: configOf(target).skillsDir,
        force: false,
        stewardVersion: stewardVersion(),
      });
      const search = await runHere(target, 'tasks.search --query dentist', 'alice');
      expect(search.stdout).toContain('Book the dentist');
      expect(existsSync(path.join(target, 'db'))).toBe(true);
    } finally {
      await server.stop();
    }
  }, 240_000);
});

describe('steward migrate', () => {
  it('backs up an older database before applying the pending migrations, and says where', async () => {
    const { listMigrations, migrate, openPglite } = await import('../src/db/index.ts');
    const { cpSync } = await import('node:fs');
    const dataDir = path.join(tmp('cli-migrate'), 'data');
    const older = tmp('cli-migrations');
    for (const migration of listMigrations().filter((item) => item.name < '0050'))
      cpSync(
        path.join(ROOT, 'migrations', `${migration.name}.sql`),
        path.join(older, `${migration.name}.sql`),
      );
    // The template has every migration: emptied of Steward's objects, it is the cluster initdb makes.
    const { dropStewardObjects } = await import('../src/backup/index.ts');
    const database = await openPglite(dataDir);
    await database.transaction(dropStewardObjects);
    await migrate(database, older);
    await database.close();
    const result = await runCli(['migrate'], { env: env(dataDir) });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(
      /^Backed up the database before applying \d+ migration\(s\) \(0050_llm_spend, .*\): .*backups\/steward-backup-\d{8}T\d{6}Z-pre-migrate\.tar\.gz\napplied: 0050_llm_spend/,
    );
  }, 180_000);
});
